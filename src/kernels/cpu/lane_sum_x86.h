// The sum of a ymm's eight floats in the one order every x86 kernel that must match the AVX2 lanes uses:
// the halves added, then pairs, then the last two. Static: each ISA file compiles its own copy (an
// inline function shared across such files could be linked as the AVX-512 copy and run on an AVX2
// machine). Included only by files compiled for AVX2 or wider.
#pragma once

#include <immintrin.h>

namespace tern::kernels::cpu {

static inline float sum_of_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace tern::kernels::cpu
