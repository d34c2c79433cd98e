#include <immintrin.h>

#include "kernels/cpu/stream_read.h"
#include "kernels/cpu/stream_read_loop.h"

namespace tern::kernels::cpu {

namespace {

struct Avx512Sum {
  __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
  void add(const uint8_t* q) {
    a = _mm512_add_epi64(a, _mm512_load_si512(q));
    b = _mm512_add_epi64(b, _mm512_load_si512(q + 64));
  }
  // Summed as unsigned words: the header's _mm512_reduce_add_epi64 adds signed ones, and they overflow.
  uint64_t total() const {
    alignas(64) uint64_t lanes[8];
    _mm512_store_si512(lanes, _mm512_add_epi64(a, b));
    uint64_t sum = 0;
    for (const uint64_t lane : lanes) sum += lane;
    return sum;
  }
};

}  // namespace

uint64_t stream_sum_avx512(const uint8_t* p, size_t bytes, StreamPattern pattern) {
  return stream_sum_loop<Avx512Sum>(p, bytes, pattern);
}

}  // namespace tern::kernels::cpu
