// AVX-512 SiLU and sigmoid gate (silu.h), sixteen values a step, the tail masked.
#include <immintrin.h>

#include "kernels/cpu/silu.h"
#include "kernels/cpu/vector_exp_avx512.h"

namespace tern::kernels::cpu {

void silu_avx512(float* out, const float* x, const float* up, int64_t n) {
  const __m512 cap = _mm512_set1_ps(88.0f), one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 live =
        n - i >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(live, x + i);
    __m512 silu = _mm512_div_ps(v, _mm512_add_ps(one, exp16(_mm512_min_ps(_mm512_sub_ps(zero, v), cap))));
    if (up != nullptr) silu = _mm512_mul_ps(silu, _mm512_maskz_loadu_ps(live, up + i));
    _mm512_mask_storeu_ps(out + i, live, silu);
  }
}

void sigmoid_gate_avx512(float* x, const float* gate, int64_t n) {
  const __m512 cap = _mm512_set1_ps(88.0f), one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 live =
        n - i >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 g = _mm512_maskz_loadu_ps(live, gate + i);
    const __m512 denominator = _mm512_add_ps(one, exp16(_mm512_min_ps(_mm512_sub_ps(zero, g), cap)));
    const __m512 gated = _mm512_div_ps(_mm512_maskz_loadu_ps(live, x + i), denominator);
    const __mmask16 nan = _mm512_cmp_ps_mask(g, g, _CMP_UNORD_Q);  // exp16 takes NaN to 0; σ(NaN) is NaN
    _mm512_mask_storeu_ps(x + i, live, _mm512_mask_mov_ps(gated, nan, g));
  }
}

}  // namespace tern::kernels::cpu
