// The lane order's step on 16-row panels (PQ2_0 panels, trit panels): each row an int32 lane of a zmm,
// each of the AVX2 order's eight lanes (qs bytes 4q..4q+3 of every field: code vector q) its own fp32
// sum, so acc[q] lane r is pq2_rows_avx2's lane q of row r step for step. Included only by files compiled
// for AVX-512 VNNI (*_vbmi.cpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/act_quant.h"

namespace tern::kernels::cpu::avx512 {

// acc + VPDPBUSD(code, the four digit bytes at p in every lane), the broadcast folded into the
// instruction as {1to16}: GCC 12 will not fold a set1 into the builtin, and the separate VPBROADCASTD per
// product cost the kernel 1.15-1.2x in L2 (Zen 4, 12-01).
inline __m512i dpbusd_bcast(__m512i acc, __m512i code, const int8_t* p) {
  asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(code), "m"(*reinterpret_cast<const int32_t*>(p)));
  return acc;
}

// d_w · step, the factor of one block's lanes 2g and 2g + 1 (act_quant.h: both take scale group g's
// step), so one product serves the two: a zmm operation fewer a pair of lanes, 1.04x in L2 (Zen 4, 12-04).
inline __m512 panel_group_scale(__m512 d_w, float step) {
  return _mm512_mul_ps(d_w, _mm512_set1_ps(step));
}

// Two instruction choices for the same integers, picked by vendor (pq2_panel_form.cpp). kShifts takes a
// code vector's fields by shifts and masks and joins a lane's digit sums by a shift and an add: Zen 4
// issues those beside the two pipes its VPDPBUSD needs, where GF2P8AFFINEQB would compete (fields by
// affine ran 1.35x slower in L2 there, 12-01). kAffine takes fields 1-3 by one GF2P8AFFINEQB each and
// the digits by one VPDPWSSD: Emerald Rapids runs 512-bit shifts on port 0 alone, and there the PQ2_0
// panel lane kernel ran in 0.84-0.86 of kShifts' time in L2 (BM_Pq2PanelFormKernelHot/1, session 34).
enum class LaneOps { kShifts, kAffine };

// Field s of every byte of qs (its bits 2s, 2s + 1) in the byte's low two bits, the rest zero.
template <LaneOps Ops>
inline void panel_fields(__m512i qs, __m512i (&code)[4]) {
  const __m512i low2 = _mm512_set1_epi8(3);
  code[0] = _mm512_and_si512(qs, low2);
  for (int s = 1; s < 4; ++s) {
    if constexpr (Ops == LaneOps::kAffine) {
      // Output bit i of a byte is the parity of (matrix byte 7 - i) & input: bits 2s and 2s + 1 to 0, 1.
      const uint64_t take = uint64_t{1} << (2 * s) << 56 | uint64_t{2} << (2 * s) << 48;
      code[s] = _mm512_gf2p8affine_epi64_epi8(qs, _mm512_set1_epi64(static_cast<long long>(take)), 0);
    } else {
      code[s] = _mm512_and_si512(_mm512_srli_epi32(qs, 2 * s), low2);
    }
  }
}

// 256·hi + lo. VPDPWSSD multiplies hi's low int16 by 256 and its high one by 0: exact, since a lane's hi
// sum is at most 16 products of a code ≤ 3 and a digit ≤ 127 in magnitude, within int16.
template <LaneOps Ops>
inline __m512i panel_digits_joined(__m512i hi, __m512i lo) {
  if constexpr (Ops == LaneOps::kAffine) return _mm512_dpwssd_epi32(lo, hi, _mm512_set1_epi32(256));
  return _mm512_add_epi32(_mm512_slli_epi32(hi, 8), lo);
}

// acc + (256·hi + lo) · scale: one block's exact lane dots from their digit sums, in the lane order's
// rounding (scale from panel_group_scale).
template <LaneOps Ops>
inline __m512 panel_lane_scaled(__m512 acc, __m512i hi, __m512i lo, __m512 scale) {
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(panel_digits_joined<Ops>(hi, lo)), scale, acc);
}

// acc[q] of one panel, block and token: code[s] holds field s of code vector q for the panel's rows,
// hi_d the token's hi digits of the block at byte 4q (act_quant.h's order: field s of qs byte j meets
// digit byte 32·s + j; the lo plane follows at + kActBlock), neg_sum its lane q's, scale the rows' d_w
// times lane q's step.
template <LaneOps Ops>
inline __m512 panel_lane_step(__m512 acc, const __m512i (&code)[4], const int8_t* hi_d, int32_t neg_sum,
                              __m512 scale) {
  const int8_t* lo_d = hi_d + kActBlock;
  __m512i hi = dpbusd_bcast(_mm512_setzero_si512(), code[0], hi_d);
  __m512i lo = dpbusd_bcast(_mm512_set1_epi32(neg_sum), code[0], lo_d);
  for (int s = 1; s < 4; ++s) {
    hi = dpbusd_bcast(hi, code[s], hi_d + 32 * s);
    lo = dpbusd_bcast(lo, code[s], lo_d + 32 * s);
  }
  return panel_lane_scaled<Ops>(acc, hi, lo, scale);
}

// The panel's rows: the eight lane sums added as pq2_rows_avx2 adds them.
inline __m512 panel_lane_sum(const __m512 (&acc)[8]) {
  return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[4]), _mm512_add_ps(acc[2], acc[6])),
                       _mm512_add_ps(_mm512_add_ps(acc[1], acc[5]), _mm512_add_ps(acc[3], acc[7])));
}

}  // namespace tern::kernels::cpu::avx512
