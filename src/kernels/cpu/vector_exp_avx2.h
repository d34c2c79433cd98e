// e^x on eight floats (vector_exp.h): 0 below vector_exp::kMin, +inf from 88.73 up to 128 · ln 2; the caller
// keeps x below that. Included only by files compiled for AVX2 (*_avx2.cpp); static, so no other ISA's
// copy can be linked in its place.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/vector_exp.h"

namespace tern::kernels::cpu {

static inline __m256 exp8(__m256 x) {
  namespace e = vector_exp;
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(e::kMin), _CMP_LT_OQ);
  x = _mm256_max_ps(x, _mm256_set1_ps(e::kMin));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(e::kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(e::kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(e::kLn2Lo), r);
  __m256 p = _mm256_set1_ps(e::kTaylor[0]);
  for (int k = 1; k < 6; ++k) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(e::kTaylor[k]));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i two_n =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(two_n)));
}

}  // namespace tern::kernels::cpu
