// AVX2 SiLU and sigmoid gate (silu.h), eight values a step; a tail shorter than that takes the scalar
// kernel.
#include <immintrin.h>

#include "kernels/cpu/silu.h"
#include "kernels/cpu/vector_exp_avx2.h"

namespace tern::kernels::cpu {

void silu_avx2(float* out, const float* x, const float* up, int64_t n) {
  // e^−x stays finite (exp8 overflows past 88.7): silu is then x / 1.6e38, zero to fp32 precision.
  const __m256 cap = _mm256_set1_ps(88.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    __m256 silu = _mm256_div_ps(v, _mm256_add_ps(one, exp8(_mm256_min_ps(_mm256_sub_ps(zero, v), cap))));
    if (up != nullptr) silu = _mm256_mul_ps(silu, _mm256_loadu_ps(up + i));
    _mm256_storeu_ps(out + i, silu);
  }
  silu_scalar(out + i, x + i, up == nullptr ? nullptr : up + i, n - i);
}

void sigmoid_gate_avx2(float* x, const float* gate, int64_t n) {
  const __m256 cap = _mm256_set1_ps(88.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 denominator = _mm256_add_ps(one, exp8(_mm256_min_ps(_mm256_sub_ps(zero, g), cap)));
    const __m256 gated = _mm256_div_ps(_mm256_loadu_ps(x + i), denominator);
    const __m256 nan = _mm256_cmp_ps(g, g, _CMP_UNORD_Q);  // exp8 takes NaN to 0; σ(NaN) is NaN
    _mm256_storeu_ps(x + i, _mm256_blendv_ps(gated, g, nan));
  }
  sigmoid_gate_scalar(x + i, gate + i, n - i);
}

}  // namespace tern::kernels::cpu
