// AVX-512 VNNI PQ2_0 prompt kernel in group order, for CPUs without AMX (pq2_matmul.h). Each int32 lane
// of a zmm is one row of a 16-row panel, so a scale group's exact dot ends in its own lane: no lane
// reduction, and the group order's products and sums are one instruction each for 16 rows.
//
// Per token chunk, each panel's codes are expanded once into a per-thread buffer: for block b, group g
// and k = 4·h + s (h = 0, 1; s = field), a 64-byte vector whose lane r holds field s of qs bytes
// 4(2g + h)..4(2g + h) + 3 of row r, i.e. the four codes that meet the activation bytes
// 32s + 4(2g + h).. of the block's hi and lo planes (act_quant.h element order). One VPDPBUSD then takes
// a broadcast of those four digits against 16 rows. The expanded panel (2 KiB a block) is reused by every
// token of the chunk, whose activations stay in L2.
//
// Per group, panel and token: 16 VPDPBUSD (hi digits from 0, lo digits from the group's −Σ(256·hi + lo)),
// the digit shift and add, a convert and the step product; per block, panel and token the group order's
// three adds and the FMA with d_w. Panels go in pairs and tokens in threes, so each digit broadcast
// serves two products and each code vector six: with one panel the loop issued more loads than products
// and ran ≈ 1.45× slower than with the broadcasts hoisted out (12-01, in L2). With block steps
// (act_quant.h: prompt tokens) the chains run through the block and the digits are joined, converted and
// scaled once a block, not once a group: 0.86× the time in L2 (BM_Pq2KernelHot/6/64/1 against /0, Emerald
// Rapids). Bit-identical to pq2_rows_avx512_groups and so to the AMX kernels.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/panel_blocks_avx512.h"
#include "kernels/cpu/panel_gather.h"
#include "kernels/cpu/panel_rows.h"
#include "kernels/cpu/pq2_panel_form.h"

namespace tern::kernels::cpu {

namespace {

inline __m512i broadcast_digits(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

struct Zmm16Panel {
  static constexpr int kRows = kPanelRows;
  static constexpr int64_t kBlockBytes = kPanelGroups * kPanelGroupVectors * 64;
  // With two panels, 3 × 2 × 2 dot chains stay in registers (4 measured the same).
  static constexpr int kTokenTile = 3;

  // Expands rows [row, row + valid) (a short panel repeats its last row).
  static void expand(const TernaryMatrix& w, int64_t row, int valid, uint8_t* codes, float* d_w) {
    gather_panel(w, row, valid, 0, w.cols / kActBlock, d_w,
                 [&](int64_t b, int dword, __m512i qs) { expand_dword(codes, b, dword, qs); });
  }

  // The four fields of one qs dword of the panel's rows (lane r: row r), block b.
  static void expand_dword(uint8_t* codes, int64_t b, int dword, __m512i qs) {
    const __m512i low2 = _mm512_set1_epi8(3);
    uint8_t* out = codes + b * kBlockBytes + panel_vector(dword, 0) * 64;
    for (int s = 0; s < 4; ++s)
      _mm512_store_si512(out + s * 64, _mm512_and_si512(_mm512_srli_epi32(qs, 2 * s), low2));
  }

  // acc[t] += block × token t under block steps: the block order's step (panel_blocks_avx512.h), the
  // group order's value.
  template <int T>
  static void finish_block(const __m512i (&dot_hi)[2][T], const __m512i (&dot_lo)[2][T],
                           const float* const d_w[2], const PanelTokenBlock tokens[T], float* const acc[T]) {
    for (int t = 0; t < T; ++t) {
      for (int p = 0; p < 2; ++p) {
        float* out = acc[t] + p * kPanelRows;
        _mm512_store_ps(
            out, avx512::block_scaled(_mm512_load_ps(out), avx512::joined_digits(dot_hi[p][t], dot_lo[p][t]),
                                      tokens[t].steps[0], _mm512_load_ps(d_w[p])));
      }
    }
  }

  // acc[t] (two panels × 16 rows, in memory) += block b of a panel pair × T tokens in the group order:
  // per row and token fma((P0 + P1) + (P2 + P3), d_w, acc). Each digit broadcast serves both panels and
  // each code vector both digits of every token, so the loop issues fewer loads than products.
  template <int T, bool kBlockSteps>
  static void pair_block(const uint8_t* const codes[2], const float* const d_w[2],
                         const PanelTokenBlock tokens[T], float* const acc[T]) {
    __m512 pair01[2][T], even[2][T];
    __m512i dot_hi[2][T], dot_lo[2][T];
#pragma GCC unroll 4
    for (int g = 0; g < kPanelGroups; ++g) {
      // Under block steps the chains run through the block from its −Σ(256·hi + lo) (|256·Σ hi| < 2^24).
      if (!kBlockSteps || g == 0) {
        for (int t = 0; t < T; ++t) {
          const __m512i neg_sum =
              _mm512_set1_epi32(kBlockSteps ? block_neg_sum(tokens[t]) : tokens[t].neg_sums[g]);
          for (int p = 0; p < 2; ++p) {
            dot_hi[p][t] = _mm512_setzero_si512();
            dot_lo[p][t] = neg_sum;
          }
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < kPanelGroupVectors; ++k) {
        const int offset = panel_digit_offset(g, k);
        const __m512i code0 = _mm512_load_si512(codes[0] + (g * kPanelGroupVectors + k) * 64);
        const __m512i code1 = _mm512_load_si512(codes[1] + (g * kPanelGroupVectors + k) * 64);
        for (int t = 0; t < T; ++t) {
          const __m512i hi = broadcast_digits(tokens[t].hi + offset);
          const __m512i lo = broadcast_digits(tokens[t].hi + kActBlock + offset);
          dot_hi[0][t] = _mm512_dpbusd_epi32(dot_hi[0][t], code0, hi);
          dot_hi[1][t] = _mm512_dpbusd_epi32(dot_hi[1][t], code1, hi);
          dot_lo[0][t] = _mm512_dpbusd_epi32(dot_lo[0][t], code0, lo);
          dot_lo[1][t] = _mm512_dpbusd_epi32(dot_lo[1][t], code1, lo);
        }
      }
      if constexpr (kBlockSteps) {
        if (g == kPanelGroups - 1) finish_block<T>(dot_hi, dot_lo, d_w, tokens, acc);
        continue;
      }
      for (int t = 0; t < T; ++t) {
        const __m512 step = _mm512_set1_ps(tokens[t].steps[2 * g]);
        for (int p = 0; p < 2; ++p) {
          const __m512i dot = avx512::joined_digits(dot_hi[p][t], dot_lo[p][t]);
          const __m512 product = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), step);
          if (g % 2 == 0) {
            even[p][t] = product;
          } else if (g == 1) {
            pair01[p][t] = _mm512_add_ps(even[p][t], product);
          } else {
            const __m512 block = _mm512_add_ps(pair01[p][t], _mm512_add_ps(even[p][t], product));
            float* out = acc[t] + p * kPanelRows;
            _mm512_store_ps(out, _mm512_fmadd_ps(block, _mm512_load_ps(d_w[p]), _mm512_load_ps(out)));
          }
        }
      }
    }
  }

  static void store(float* y, const float* acc, int valid) {
    _mm512_mask_storeu_ps(y, static_cast<__mmask16>((1u << valid) - 1u), _mm512_load_ps(acc));
  }
};

// The same kernel on PQ2_0 panels (quant/pq2_panels.h): the stored vectors are the gathered ones, so
// expanding a panel is loads, shifts and masks. `row` starts a panel; rows past the matrix are zero.
struct Zmm16StoredPanel : Zmm16Panel {
  static void expand(const TernaryMatrix& w, int64_t row, int, uint8_t* codes, float* d_w) {
    load_stored_panel(w, row, 0, w.cols / kActBlock, d_w,
                      [&](int64_t b, int dword, __m512i qs) { expand_dword(codes, b, dword, qs); });
  }
};

}  // namespace

void pq2_panel_form_rows_groups(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                                int64_t row_begin, int64_t row_end) {
  const int64_t first =
      rows_before_whole_panels(pq2_rows_avx512_groups, y, y_stride, w, a, row_begin, row_end);
  if (first < row_end) panel_rows<Zmm16StoredPanel>(y, y_stride, w, a, first, row_end);
}

void pq2_rows_avx512_panels(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                            int64_t row_begin, int64_t row_end) {
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  panel_rows<Zmm16Panel>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
