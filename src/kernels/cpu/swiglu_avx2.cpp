// AVX2 SwiGLU (swiglu.h), eight values a step; a tail shorter than that takes the scalar kernel.
#include <immintrin.h>

#include "kernels/cpu/swiglu.h"
#include "kernels/cpu/vector_exp_avx2.h"

namespace tern::kernels::cpu {

void swiglu_avx2(float* gate, const float* up, int64_t n) {
  // e^−x stays finite (exp8 overflows past 88.7): silu is then x / 1.6e38, zero to fp32 precision.
  const __m256 cap = _mm256_set1_ps(88.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    const __m256 e = exp8(_mm256_min_ps(_mm256_sub_ps(zero, x), cap));
    _mm256_storeu_ps(gate + i,
                     _mm256_mul_ps(_mm256_div_ps(x, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
  }
  swiglu_scalar(gate + i, up + i, n - i);
}

}  // namespace tern::kernels::cpu
