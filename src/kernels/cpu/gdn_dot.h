// k·q for the GDN kernels (AVX2 and AVX-512 files): one summation order, so that both give the same bits.
// Static: each file compiles its own copy for its own ISA flags (an inline function shared across such
// files could be linked as the AVX-512 copy and run on an AVX2 machine).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace tern::kernels::cpu {

static inline float gdn_dot(const float* x, const float* y, int64_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int a = 0; a < 4; ++a) {
      acc[a] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * a), _mm256_loadu_ps(y + i + 8 * a), acc[a]);
    }
  }
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc[0]);
  const __m256 all = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(all), _mm256_extractf128_ps(all, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  float total = _mm_cvtss_f32(sum);
  for (; i < n; ++i) total = std::fma(x[i], y[i], total);
  return total;
}

}  // namespace tern::kernels::cpu
