// AVX-512 twin of quantize_block (act_quant.cpp), byte for byte the same result: the same IEEE
// divisions and round-to-nearest-even, then the natural-order digits transposed into the s-planes
// with one in-lane byte shuffle and one cross-lane dword permute per 64 bytes.
#include <immintrin.h>

#include <algorithm>
#include <cfloat>
#include <iterator>
#include <limits>

#include "kernels/cpu/act_quant.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kGroups = kActBlock / kActGroup;

float group_step(const __m512 x0, const __m512 x1) {
  const __m512 a0 = _mm512_abs_ps(x0), a1 = _mm512_abs_ps(x1);
  const __m512 finite_max = _mm512_set1_ps(FLT_MAX);
  const __mmask16 finite0 = _mm512_cmp_ps_mask(a0, finite_max, _CMP_LE_OQ);
  const __mmask16 finite1 = _mm512_cmp_ps_mask(a1, finite_max, _CMP_LE_OQ);
  if ((finite0 & finite1) != 0xffff) return std::numeric_limits<float>::quiet_NaN();
  return _mm512_reduce_max_ps(_mm512_max_ps(a0, a1)) / (127.0f * kLoDigit);
}

// The hi and lo digits of 16 values, as int32 lanes.
void digits(const __m512 x, const __m512 step, __m512i& hi, __m512i& lo) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512 limit = _mm512_set1_ps(127.0f), digit = _mm512_set1_ps(kLoDigit);
  const __m512 in_steps = _mm512_div_ps(x, step);
  const __m512 high = _mm512_roundscale_ps(_mm512_div_ps(in_steps, digit), kNearest);
  const __m512 low = _mm512_roundscale_ps(_mm512_fnmadd_ps(high, digit, in_steps), kNearest);
  const auto clamp = [&](__m512 v) { return _mm512_min_ps(_mm512_max_ps(v, -limit), limit); };
  hi = _mm512_cvttps_epi32(clamp(high));
  lo = _mm512_cvttps_epi32(clamp(low));
}

// 128 natural-order int8 digits (two zmm, element j = 4i + s at byte j) → the planes [s0|s1], [s2|s3]
// (element 4i + s at byte 32s + i).
void to_planes(const __m512i natural0, const __m512i natural1, int8_t* out) {
  // In each 16-byte lane, the 4×4 byte transpose: dword s of the lane holds byte s of its 4 elements.
  const __m512i transpose =
      _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __m512i t0 = _mm512_shuffle_epi8(natural0, transpose), t1 = _mm512_shuffle_epi8(natural1, transpose);
  // Plane s is dword s of lanes 0..3 of t0, then of t1 (indices ≥ 16 select t1).
  const __m512i planes01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
  const __m512i planes23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
  _mm512_storeu_si512(out, _mm512_permutex2var_epi32(t0, planes01, t1));
  _mm512_storeu_si512(out + 64, _mm512_permutex2var_epi32(t0, planes23, t1));
}

__m512i pack_natural(const __m512i d0, const __m512i d1, const __m512i d2, const __m512i d3) {
  const __m256i low =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(d0)), _mm512_cvtepi32_epi8(d1), 1);
  const __m256i high =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(d2)), _mm512_cvtepi32_epi8(d3), 1);
  return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

}  // namespace

void quantize_block_avx512(const float* x, const ActBlockOut& out, StepScope scope) {
  __m512 v[8];
  for (int i = 0; i < 8; ++i) v[i] = _mm512_loadu_ps(x + 16 * i);
  float steps[kGroups];
  for (int64_t g = 0; g < kGroups; ++g) steps[g] = group_step(v[2 * g], v[2 * g + 1]);
  if (scope == StepScope::kBlock) std::fill(std::begin(steps), std::end(steps), block_step(steps));
  __m512i hi[8], lo[8];
  for (int64_t g = 0; g < kGroups; ++g) {
    for (int64_t h = 2 * g; h < 2 * g + 2; ++h) {
      if (steps[g] > 0.0f) {  // false for 0 and NaN: the digits stay 0
        digits(v[h], _mm512_set1_ps(steps[g]), hi[h], lo[h]);
      } else {
        hi[h] = lo[h] = _mm512_setzero_si512();
      }
    }
  }
  const __m512i hi01 = pack_natural(hi[0], hi[1], hi[2], hi[3]),
                hi23 = pack_natural(hi[4], hi[5], hi[6], hi[7]);
  const __m512i lo01 = pack_natural(lo[0], lo[1], lo[2], lo[3]),
                lo23 = pack_natural(lo[4], lo[5], lo[6], lo[7]);
  to_planes(hi01, hi23, out.q);
  to_planes(lo01, lo23, out.q + kActBlock);

  // Lane sums of the stored planes: zmm lane l covers 4 bytes of [s0|s1] and the same 4 of [s2|s3].
  const __m512i ones = _mm512_set1_epi8(1);
  const auto lane_sums = [&](const int8_t* planes) {
    const __m512i sum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_loadu_si512(planes));
    return _mm512_dpbusd_epi32(sum, ones, _mm512_loadu_si512(planes + 64));
  };
  const __m512i hi_sums = lane_sums(out.q), lo_sums = lane_sums(out.q + kActBlock);
  _mm512_storeu_si512(out.zmm_sums, _mm512_sub_epi32(_mm512_setzero_si512(), hi_sums));
  _mm512_storeu_si512(out.zmm_sums + kZmmLanes, lo_sums);
  const auto fold = [](__m512i s) {
    return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
  };
  const __m256i ymm = _mm256_add_epi32(_mm256_slli_epi32(fold(hi_sums), 8), fold(lo_sums));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.ymm_neg_sums),
                      _mm256_sub_epi32(_mm256_setzero_si256(), ymm));
  const __m256 lane_steps =
      _mm256_setr_ps(steps[0], steps[0], steps[1], steps[1], steps[2], steps[2], steps[3], steps[3]);
  _mm256_storeu_ps(out.ymm_scales, lane_steps);
  const __m512d both = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lane_steps)),
                                          _mm256_castps_pd(lane_steps), 1);
  _mm512_storeu_ps(out.zmm_scales, _mm512_castpd_ps(both));
}

}  // namespace tern::kernels::cpu
