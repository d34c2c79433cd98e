// The AVX-512 steps of the AVX2 lane order on two rows at once, [row A | row B] in each zmm: shared by
// the PQ2_0 pairs kernel (pq2_pairs_vbmi.cpp) and the trit planes decode kernel (trit_planes_vbmi.cpp), so
// both give pq2_rows_avx2's bits. Included only by files compiled for AVX-512 VBMI (*_vbmi.cpp).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/lane_sum_x86.h"
#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu::avx512 {

// One block of two rows.
struct PairCodes {
  __m512i f[4];  // 2-bit field s of the 32 qs bytes: [row A | row B]
  __m512 d_w;    // [d_A × 8 | d_B × 8]
};

// acc + d_w · lane step · (256·Σ code·hi + Σ code·lo − lane sum) for one block of one token, lane l of
// each half summing qs bytes 4l..4l+3 of every field: the AVX2 kernel's lane, exactly. q, neg_sums and
// scales point at the block's activations, negated ymm lane sums and ymm lane scales.
inline __m512 pair_step(__m512 acc, const PairCodes& codes, const int8_t* q, const int32_t* neg_sums,
                        const float* scales) {
  const auto plane = [&](int s, int digit) {
    return _mm512_broadcast_i64x4(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(q + digit * kActBlock + 32 * s)));
  };
  // Four independent chains of two (hi and lo digit, fields 0–1 and 2–3). A VPDPBUSD waits about six
  // cycles for its accumulator; with two chains of four per block the loop only kept both dot-product
  // ports busy where the compiler interleaved two blocks (GCC -O3): at -O2 it ran 1.45× slower in L2.
  // Four chains make that independent of the compiler (equal at -O3, 11-30). The lo chain of fields
  // 0–1 starts from the negated lane sums, which spares a subtraction and a zeroed register per block.
  const __m512i zero = _mm512_setzero_si512();
  __m512i hi01 = _mm512_dpbusd_epi32(zero, codes.f[0], plane(0, 0));
  __m512i hi23 = _mm512_dpbusd_epi32(zero, codes.f[2], plane(2, 0));
  __m512i lo01 = _mm512_dpbusd_epi32(
      _mm512_broadcast_i64x4(_mm256_load_si256(reinterpret_cast<const __m256i*>(neg_sums))), codes.f[0],
      plane(0, 1));
  __m512i lo23 = _mm512_dpbusd_epi32(zero, codes.f[2], plane(2, 1));
  hi01 = _mm512_dpbusd_epi32(hi01, codes.f[1], plane(1, 0));
  hi23 = _mm512_dpbusd_epi32(hi23, codes.f[3], plane(3, 0));
  lo01 = _mm512_dpbusd_epi32(lo01, codes.f[1], plane(1, 1));
  lo23 = _mm512_dpbusd_epi32(lo23, codes.f[3], plane(3, 1));
  // Integer sums are exact in any order, so the lanes hold the AVX2 kernel's integers.
  const __m512i dot =
      _mm512_add_epi32(_mm512_slli_epi32(_mm512_add_epi32(hi01, hi23), 8), _mm512_add_epi32(lo01, lo23));
  const __m512 scale = _mm512_mul_ps(
      codes.d_w, _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_load_ps(scales)))));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc);
}

// Row A's and row B's sums of a pair accumulator.
inline float row_a_sum(__m512 acc) {
  return sum_of_lanes(_mm512_castps512_ps256(acc));
}
inline float row_b_sum(__m512 acc) {
  return sum_of_lanes(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1)));
}

// One token's activations as pair_step reads them (the ymm lane view of act_quant.h).
struct PairActs {
  const int8_t* q;
  const int32_t* neg_sums;
  const float* scales;

  PairActs() = default;
  PairActs(const QuantizedActs& a, int64_t token)
      : q(a.token_q(token)), neg_sums(a.token_ymm_neg_sums(token)), scales(a.token_ymm_scales(token)) {}
  // acc after block b.
  __m512 step(__m512 acc, const PairCodes& codes, int64_t b) const {
    return pair_step(acc, codes, q + b * kActBlockBytes, neg_sums + b * kYmmLanes, scales + b * kYmmLanes);
  }
};

// An R-row × T-token tile in pairs: the rows (a lone last row paired with itself), the tokens'
// activations and the accumulators.
template <int R, int T>
struct PairTile {
  static constexpr int kPairs = (R + 1) / 2;
  const uint8_t* rows[2 * kPairs];
  PairActs acts[T];
  __m512 acc[kPairs][T];

  PairTile(const TernaryMatrix& w, const QuantizedActs& a, int64_t row, int64_t token) {
    for (int t = 0; t < T; ++t) acts[t] = PairActs(a, token + t);
    for (int r = 0; r < 2 * kPairs; ++r)
      rows[r] = w.data + static_cast<size_t>(row + std::min(r, R - 1)) * w.row_bytes;
    for (int p = 0; p < kPairs; ++p)
      for (int t = 0; t < T; ++t) acc[p][t] = _mm512_setzero_ps();
  }
  // y[(token + t) * y_stride + row + r] for the tile's R rows.
  void store(float* y, int64_t y_stride, int64_t row, int64_t token) const {
    for (int p = 0; p < kPairs; ++p) {
      for (int t = 0; t < T; ++t) {
        float* out = y + (token + t) * y_stride + row + 2 * p;
        out[0] = row_a_sum(acc[p][t]);
        if (2 * p + 1 < R) out[1] = row_b_sum(acc[p][t]);
      }
    }
  }
};

}  // namespace tern::kernels::cpu::avx512
