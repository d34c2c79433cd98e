#include <immintrin.h>

#include "kernels/cpu/stream_read.h"
#include "kernels/cpu/stream_read_loop.h"

namespace tern::kernels::cpu {

namespace {

struct Avx2Sum {
  __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256(), c = _mm256_setzero_si256(),
          d = _mm256_setzero_si256();
  void add(const uint8_t* q) {
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(q)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 32)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 64)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 96)));
  }
  uint64_t total() const {
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                       _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
  }
};

}  // namespace

uint64_t stream_sum_avx2(const uint8_t* p, size_t bytes, StreamPattern pattern) {
  return stream_sum_loop<Avx2Sum>(p, bytes, pattern);
}

}  // namespace tern::kernels::cpu
