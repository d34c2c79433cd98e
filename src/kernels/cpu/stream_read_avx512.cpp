#include <immintrin.h>

#include "kernels/cpu/stream_read.h"

namespace tern::kernels::cpu {

uint64_t stream_sum_avx512(const uint8_t* p, size_t bytes, bool prefetch) {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  for (size_t i = 0; i < bytes; i += 128) {
    if (prefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(p + i + kStreamPrefetchBytes), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(p + i + kStreamPrefetchBytes + 64), _MM_HINT_T0);
    }
    a = _mm512_add_epi64(a, _mm512_load_si512(p + i));
    b = _mm512_add_epi64(b, _mm512_load_si512(p + i + 64));
  }
  // Summed as unsigned words: the header's _mm512_reduce_add_epi64 adds signed ones, and they overflow.
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(a, b));
  uint64_t sum = 0;
  for (const uint64_t lane : lanes) sum += lane;
  return sum;
}

}  // namespace tern::kernels::cpu
