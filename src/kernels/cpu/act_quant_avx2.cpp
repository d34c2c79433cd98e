// AVX2 twin of quantize_block (act_quant.cpp), byte for byte the same result: the same IEEE divisions
// and round-to-nearest-even, the digits packed to bytes per scale group and transposed into the
// s-planes with one in-lane byte shuffle and two dword permutes, and the lane sums taken from the stored
// planes.
#include <immintrin.h>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <iterator>
#include <limits>

#include "kernels/cpu/act_quant.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kGroups = kActBlock / kActGroup;
constexpr int kVectorsPerGroup = kActGroup / 8;

float group_step(const __m256 (&x)[kVectorsPerGroup]) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 finite_max = _mm256_set1_ps(FLT_MAX);
  __m256 amax = _mm256_setzero_ps();
  int finite = 0xff;
  for (const __m256 v : x) {
    const __m256 a = _mm256_and_ps(v, abs_mask);
    finite &= _mm256_movemask_ps(_mm256_cmp_ps(a, finite_max, _CMP_LE_OQ));  // false for NaN too
    amax = _mm256_max_ps(amax, a);
  }
  if (finite != 0xff) return std::numeric_limits<float>::quiet_NaN();
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m) / (127.0f * kLoDigit);
}

// The hi and lo digits of 8 values, as int32 lanes.
void digits(const __m256 x, const __m256 step, __m256i& hi, __m256i& lo) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m256 limit = _mm256_set1_ps(127.0f), neg_limit = _mm256_set1_ps(-127.0f);
  const __m256 digit = _mm256_set1_ps(kLoDigit);
  const __m256 in_steps = _mm256_div_ps(x, step);
  const __m256 high = _mm256_round_ps(_mm256_div_ps(in_steps, digit), kNearest);
  // high · 256 is exact, so the fused form rounds as the scalar subtraction does.
  const __m256 low = _mm256_round_ps(_mm256_fnmadd_ps(high, digit, in_steps), kNearest);
  const auto clamp = [&](__m256 v) { return _mm256_min_ps(_mm256_max_ps(v, neg_limit), limit); };
  hi = _mm256_cvttps_epi32(clamp(high));
  lo = _mm256_cvttps_epi32(clamp(low));
}

// One group's 32 int32 digits (natural order: element 4i + s of the group is lane 4i + s of d) into the
// planes: element 4i + s goes to byte 32s + 8g + i of `planes`.
void store_group(const __m256i (&d)[kVectorsPerGroup], int64_t g, int8_t* planes) {
  // The packs interleave 128-bit halves: dwords (d0 0-3)(d1 0-3)(d2 0-3)(d3 0-3)(d0 4-7)...; |digit| ≤ 127
  // so nothing saturates.
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(d[0], d[1]), _mm256_packs_epi32(d[2], d[3]));
  const __m256i halves = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i natural = _mm256_permutevar8x32_epi32(packed, halves);  // byte 4i + s: i = 0..3 | 4..7
  // In each 16-byte lane, the 4×4 byte transpose: dword s holds byte s of the lane's four elements.
  const __m256i transpose = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8,
                                             12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m256i planes_of_group =  // qword s: plane s, i = 0..7
      _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(natural, transpose), halves);
  alignas(32) int64_t qwords[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(qwords), planes_of_group);
  for (int64_t s = 0; s < 4; ++s) std::memcpy(planes + 32 * s + 8 * g, &qwords[s], sizeof qwords[s]);
}

// Per int32 lane l: the sum of bytes 4l..4l+3 of planes a and b.
__m256i lane_sums(const int8_t* planes, int64_t a, int64_t b) {
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  const auto pairs = [&](int64_t s) {
    return _mm256_maddubs_epi16(ones8, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(planes + 32 * s)));
  };
  return _mm256_madd_epi16(_mm256_add_epi16(pairs(a), pairs(b)), ones16);
}

}  // namespace

void quantize_block_avx2(const float* x, const ActBlockOut& out, StepScope scope) {
  __m256 v[kGroups][kVectorsPerGroup];
  float steps[kGroups];
  for (int64_t g = 0; g < kGroups; ++g) {
    for (int i = 0; i < kVectorsPerGroup; ++i) v[g][i] = _mm256_loadu_ps(x + kActGroup * g + 8 * i);
    steps[g] = group_step(v[g]);
  }
  if (scope == StepScope::kBlock) std::fill(std::begin(steps), std::end(steps), block_step(steps));
  for (int64_t g = 0; g < kGroups; ++g) {
    __m256i hi[kVectorsPerGroup] = {}, lo[kVectorsPerGroup] = {};
    if (steps[g] > 0.0f) {  // false for 0 and NaN: the digits stay 0
      const __m256 step = _mm256_set1_ps(steps[g]);
      for (int i = 0; i < kVectorsPerGroup; ++i) digits(v[g][i], step, hi[i], lo[i]);
    }
    store_group(hi, g, out.q);
    store_group(lo, g, out.q + kActBlock);
  }

  // zmm lane l covers planes s0 and s2 (l < 8) or s1 and s3 (l ≥ 8); ymm lane l all four.
  const __m256i hi02 = lane_sums(out.q, 0, 2), hi13 = lane_sums(out.q, 1, 3);
  const __m256i lo02 = lane_sums(out.q + kActBlock, 0, 2), lo13 = lane_sums(out.q + kActBlock, 1, 3);
  const __m256i zero = _mm256_setzero_si256();
  auto* zmm_sums = reinterpret_cast<__m256i*>(out.zmm_sums);
  _mm256_storeu_si256(zmm_sums, _mm256_sub_epi32(zero, hi02));
  _mm256_storeu_si256(zmm_sums + 1, _mm256_sub_epi32(zero, hi13));
  _mm256_storeu_si256(zmm_sums + 2, lo02);
  _mm256_storeu_si256(zmm_sums + 3, lo13);
  const __m256i ymm =
      _mm256_add_epi32(_mm256_slli_epi32(_mm256_add_epi32(hi02, hi13), 8), _mm256_add_epi32(lo02, lo13));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.ymm_neg_sums), _mm256_sub_epi32(zero, ymm));
  const __m256 lane_steps =
      _mm256_setr_ps(steps[0], steps[0], steps[1], steps[1], steps[2], steps[2], steps[3], steps[3]);
  _mm256_storeu_ps(out.ymm_scales, lane_steps);
  _mm256_storeu_ps(out.zmm_scales, lane_steps);
  _mm256_storeu_ps(out.zmm_scales + kYmmLanes, lane_steps);
}

}  // namespace tern::kernels::cpu
