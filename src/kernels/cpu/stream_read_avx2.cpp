#include <immintrin.h>

#include "kernels/cpu/stream_read.h"

namespace tern::kernels::cpu {

uint64_t stream_sum_avx2(const uint8_t* p, size_t bytes, bool prefetch) {
  __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256(), c = _mm256_setzero_si256(),
          d = _mm256_setzero_si256();
  for (size_t i = 0; i < bytes; i += 128) {
    if (prefetch) {
      _mm_prefetch(reinterpret_cast<const char*>(p + i + kStreamPrefetchBytes), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(p + i + kStreamPrefetchBytes + 64), _MM_HINT_T0);
    }
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace tern::kernels::cpu
