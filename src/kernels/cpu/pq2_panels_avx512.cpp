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
// and ran ≈ 1.45× slower than with the broadcasts hoisted out (12-01, in L2). Bit-identical to
// pq2_rows_avx512_groups and so to the AMX kernels.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/panel_gather.h"
#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kGroups = static_cast<int>(kActBlock / kActGroup);
constexpr int kGroupVectors = 8;  // two qs dwords × four fields
constexpr int64_t kPanelBlockBytes = kGroups * kGroupVectors * 64;
// Tokens per tile: with two panels, 3 × 2 × 2 dot chains stay in registers (4 measured the same).
constexpr int kTokenTile = 3;
// The activations of one token chunk stay in L2 (2 MiB here) beside one expanded panel pair (≤ 0.55 MiB
// at K = 17408) while the chunk sweeps the thread's panels. (Expanding a block at a time, with a larger
// chunk, measured slower.)
constexpr int64_t kChunkBytes = int64_t{1} << 20;

struct ThreadScratch {
  GrowBuffer<uint8_t> codes;           // [2 panels][blocks][4 groups][8][64]
  GrowBuffer<float> d_w;               // [2 panels][blocks][16 rows]
  GrowBuffer<int32_t> group_neg_sums;  // [chunk tokens][blocks][4]: −Σ (256·hi + lo) of each group
  GrowBuffer<float> acc;               // [chunk tokens][2 panels][16 rows]
};

// Expands rows [row, row + valid) (a short panel repeats its last row).
void expand_panel(const TernaryMatrix& w, int64_t row, int valid, uint8_t* codes, float* d_w) {
  const __m512i low2 = _mm512_set1_epi8(3);
  gather_panel(w, row, valid, d_w, [&](int64_t b, int dword, __m512i qs) {
    uint8_t* out = codes + b * kPanelBlockBytes + ((dword / 2) * kGroupVectors + 4 * (dword % 2)) * 64;
    for (int s = 0; s < 4; ++s)
      _mm512_store_si512(out + s * 64, _mm512_and_si512(_mm512_srli_epi32(qs, 2 * s), low2));
  });
}

// −Σ (256·hi + lo) per group of the chunk's tokens (ymm lanes 2g and 2g + 1 cover group g).
void fill_group_neg_sums(const QuantizedActs& a, int64_t first, int64_t count, int32_t* out) {
  const int64_t blocks = a.blocks();
  for (int64_t t = 0; t < count; ++t) {
    const int32_t* lanes = a.token_ymm_neg_sums(first + t);
    for (int64_t i = 0; i < blocks * kGroups; ++i)
      out[t * blocks * kGroups + i] = lanes[2 * i] + lanes[2 * i + 1];
  }
}

inline __m512i broadcast_digits(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// One token's view of block b: its hi digit plane (the lo plane follows), its four groups' −Σ(256·hi + lo)
// and its ymm lane scales (lane 2g: group g's step).
struct TokenBlock {
  const int8_t* hi;
  const int32_t* neg_sums;
  const float* steps;
};

// acc[t] (two panels × 16 rows, in memory) += block b of a panel pair × T tokens in the group order:
// per row and token fma((P0 + P1) + (P2 + P3), d_w, acc). Each digit broadcast serves both panels and
// each code vector both digits of every token, so the loop issues fewer loads than products.
template <int T>
void pair_block(const uint8_t* const codes[2], const float* const d_w[2], const TokenBlock tokens[T],
                float* const acc[T]) {
  __m512 pair01[2][T], even[2][T];
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; ++g) {
    __m512i dot_hi[2][T], dot_lo[2][T];
    for (int t = 0; t < T; ++t) {
      const __m512i neg_sum = _mm512_set1_epi32(tokens[t].neg_sums[g]);
      for (int p = 0; p < 2; ++p) {
        dot_hi[p][t] = _mm512_setzero_si512();
        dot_lo[p][t] = neg_sum;
      }
    }
#pragma GCC unroll 8
    for (int k = 0; k < kGroupVectors; ++k) {
      const int offset = 8 * g + 32 * (k % 4) + 4 * (k / 4);
      const __m512i code0 = _mm512_load_si512(codes[0] + (g * kGroupVectors + k) * 64);
      const __m512i code1 = _mm512_load_si512(codes[1] + (g * kGroupVectors + k) * 64);
      for (int t = 0; t < T; ++t) {
        const __m512i hi = broadcast_digits(tokens[t].hi + offset);
        const __m512i lo = broadcast_digits(tokens[t].hi + kActBlock + offset);
        dot_hi[0][t] = _mm512_dpbusd_epi32(dot_hi[0][t], code0, hi);
        dot_hi[1][t] = _mm512_dpbusd_epi32(dot_hi[1][t], code1, hi);
        dot_lo[0][t] = _mm512_dpbusd_epi32(dot_lo[0][t], code0, lo);
        dot_lo[1][t] = _mm512_dpbusd_epi32(dot_lo[1][t], code1, lo);
      }
    }
    for (int t = 0; t < T; ++t) {
      const __m512 step = _mm512_set1_ps(tokens[t].steps[2 * g]);
      for (int p = 0; p < 2; ++p) {
        const __m512i dot = _mm512_add_epi32(_mm512_slli_epi32(dot_hi[p][t], 8), dot_lo[p][t]);
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

// Block b of a panel pair for the chunk's `count` tokens (acc: [count][2][16]).
void pair_block_tokens(const uint8_t* const codes[2], const float* const d_w[2], const QuantizedActs& a,
                       const int32_t* neg_sums, int64_t first, int64_t count, int64_t b, float* acc) {
  const int64_t blocks = a.blocks();
  const auto token_block = [&](int64_t t) {
    return TokenBlock{a.token_q(first + t) + b * kActBlockBytes, neg_sums + (t * blocks + b) * kGroups,
                      a.token_ymm_scales(first + t) + b * kYmmLanes};
  };
  const auto tile = [&]<int T>(int64_t t) {
    TokenBlock tokens[T];
    float* out[T];
    for (int i = 0; i < T; ++i) {
      tokens[i] = token_block(t + i);
      out[i] = acc + (t + i) * 2 * kPanelRows;
    }
    pair_block<T>(codes, d_w, tokens, out);
  };
  int64_t t = 0;
  for (; t + kTokenTile <= count; t += kTokenTile) tile.template operator()<kTokenTile>(t);
  if (count - t == 2) tile.template operator()<2>(t);
  if (count - t == 1) tile.template operator()<1>(t);
}

}  // namespace

void pq2_rows_avx512_panels(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                            int64_t row_begin, int64_t row_end) {
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t chunk = std::max<int64_t>(1, kChunkBytes / (blocks * kActBlockBytes));
  const int64_t chunk_tokens = std::min(chunk, a.n_tokens);
  uint8_t* codes = scratch.codes.at_least(static_cast<size_t>(2 * blocks * kPanelBlockBytes));
  float* d_w = scratch.d_w.at_least(static_cast<size_t>(2 * blocks * kPanelRows));
  int32_t* neg_sums = scratch.group_neg_sums.at_least(static_cast<size_t>(chunk_tokens * blocks * kGroups));
  float* acc = scratch.acc.at_least(static_cast<size_t>(chunk_tokens * 2 * kPanelRows));
  for (int64_t first = 0; first < a.n_tokens; first += chunk) {
    const int64_t count = std::min(chunk, a.n_tokens - first);
    fill_group_neg_sums(a, first, count, neg_sums);
    for (int64_t row = row_begin; row < row_end; row += 2 * kPanelRows) {
      // A lone last panel runs as both panels of the pair; the copy's sums are not stored.
      const int valid[2] = {static_cast<int>(std::min<int64_t>(kPanelRows, row_end - row)),
                            static_cast<int>(std::clamp<int64_t>(row_end - row - kPanelRows, 0, kPanelRows))};
      const int second = valid[1] > 0 ? 1 : 0;
      expand_panel(w, row, valid[0], codes, d_w);
      if (second) {
        expand_panel(w, row + kPanelRows, valid[1], codes + blocks * kPanelBlockBytes,
                     d_w + blocks * kPanelRows);
      }
      std::memset(acc, 0, static_cast<size_t>(count * 2 * kPanelRows) * sizeof(float));
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* const block_codes[2] = {codes + b * kPanelBlockBytes,
                                               codes + (second * blocks + b) * kPanelBlockBytes};
        const float* const block_d_w[2] = {d_w + b * kPanelRows, d_w + (second * blocks + b) * kPanelRows};
        pair_block_tokens(block_codes, block_d_w, a, neg_sums, first, count, b, acc);
      }
      for (int p = 0; p <= second; ++p) {
        const __mmask16 rows = static_cast<__mmask16>((1u << valid[p]) - 1u);
        for (int64_t t = 0; t < count; ++t)
          _mm512_mask_storeu_ps(y + (first + t) * y_stride + row + p * kPanelRows, rows,
                                _mm512_load_ps(acc + (t * 2 + p) * kPanelRows));
      }
    }
  }
}

}  // namespace tern::kernels::cpu
