// AVX2 Walsh–Hadamard butterflies: stages 1, 2 and 4 inside each 8-float register (a lane swap, then
// a + b in the lower lane of each pair and b' − a' arranged so the upper lane gets a − b), stages ≥ 8
// between registers.
#include <immintrin.h>

#include "kernels/cpu/site_transform.h"

namespace tern::kernels::cpu {

namespace {

// One in-register stage: `swapped` holds each lane's partner; lanes in `upper` take partner − self
// (= a − b there, a being the lower lane's value), the others self + partner.
template <int kUpperMask>
__m256 stage(__m256 v, __m256 swapped) {
  return _mm256_blend_ps(_mm256_add_ps(v, swapped), _mm256_sub_ps(swapped, v), kUpperMask);
}

__m256 butterflies_within_8(__m256 v) {
  v = stage<0b10101010>(v, _mm256_permute_ps(v, 0b10110001));
  v = stage<0b11001100>(v, _mm256_permute_ps(v, 0b01001110));
  return stage<0b11110000>(v, _mm256_permute2f128_ps(v, v, 0x01));
}

}  // namespace

void fwht_avx2(float* x, int64_t block) {
  for (int64_t i = 0; i < block; i += 8)
    _mm256_storeu_ps(x + i, butterflies_within_8(_mm256_loadu_ps(x + i)));
  for (int64_t h = 8; h < block; h *= 2) {
    for (int64_t i = 0; i < block; i += 2 * h) {
      for (int64_t j = i; j < i + h; j += 8) {
        const __m256 a = _mm256_loadu_ps(x + j);
        const __m256 b = _mm256_loadu_ps(x + j + h);
        _mm256_storeu_ps(x + j, _mm256_add_ps(a, b));
        _mm256_storeu_ps(x + j + h, _mm256_sub_ps(a, b));
      }
    }
  }
}

}  // namespace tern::kernels::cpu
