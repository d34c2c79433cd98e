// The x86 dense kernels' (dense_matmul.h) last step, shared so that they give the same bits: the row's
// four eight-lane chains over k mod 32 added pairwise, then across the lanes. Static: each ISA file
// compiles its own copy (gdn_recurrence.h says why).
#pragma once

#include <immintrin.h>

namespace tern::kernels::cpu {

static inline float dense_chains_total(__m256 c0, __m256 c1, __m256 c2, __m256 c3) {
  const __m256 all = _mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(all), _mm256_extractf128_ps(all, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace tern::kernels::cpu
