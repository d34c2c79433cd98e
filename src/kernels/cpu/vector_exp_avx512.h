// e^x on sixteen floats (vector_exp.h): 0 below vector_exp::kMin, +inf on overflow. Included only by files
// compiled for AVX-512 (*_avx512.cpp); static, so no other ISA's copy can be linked in its place.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/vector_exp.h"

namespace tern::kernels::cpu {

static inline __m512 exp16(__m512 x) {
  namespace e = vector_exp;
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(e::kMin), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(e::kMin));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(e::kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(e::kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(e::kLn2Lo), r);
  __m512 p = _mm512_set1_ps(e::kTaylor[0]);
  for (int k = 1; k < 6; ++k) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(e::kTaylor[k]));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(live, p, n);
}

}  // namespace tern::kernels::cpu
