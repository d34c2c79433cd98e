// The walk shared by the group-order panel kernels on AVX-512 (16-row panels) and AVX-VNNI (8-row panels):
// token chunks whose activations stay in L2, panel pairs expanded once per chunk, token tiles, the stores.
// Each kernel supplies a Panel policy:
//   Panel::kRows, Panel::kBlockBytes (expanded codes of one panel and block), Panel::kTokenTile (≤ 3)
//   Panel::expand(w, row, valid, codes, d_w)    rows [row, row + valid) of w, block after block
//   Panel::pair_block<T, kBlockSteps>(codes[2], d_w[2], tokens[T], acc[T])
//                                               acc[t] += block × token t, group order; with kBlockSteps
//                                               (act_quant.h) the block's sums scaled once, the same value
//   Panel::store(y, acc, valid)                 the first `valid` of kRows sums
// Included only by files compiled for those ISAs; the policies live in each file's anonymous namespace,
// so every instantiation is compiled for its own ISA.
#pragma once

#include <algorithm>
#include <cstring>

#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

inline constexpr int kPanelGroups = static_cast<int>(kActBlock / kActGroup);
// The expanded codes of a panel and block: per group g, eight vectors k = 4·h + s (two qs dwords × four
// fields), vector k holding field s of qs dword 2g + h of each row, one code a byte.
inline constexpr int kPanelGroupVectors = 8;

// Where expand puts field s of qs dword `dword`, in vectors from the block's first.
constexpr int panel_vector(int dword, int s) {
  return (dword / 2) * kPanelGroupVectors + 4 * (dword % 2) + s;
}

// The byte, within each digit plane of an activation block, of the four digits that meet vector k of
// group g (act_quant.h element order: field s of qs byte j is element 32·s + j).
constexpr int panel_digit_offset(int g, int k) {
  return 8 * g + 32 * (k % 4) + 4 * (k / 4);
}
// The activations of one token chunk stay in L2 (2 MiB here) beside one expanded panel pair (≤ 0.55 MiB
// at K = 17408) while the chunk sweeps the thread's panels. (Expanding a block at a time, with a larger
// chunk, measured slower.)
inline constexpr int64_t kPanelChunkBytes = int64_t{1} << 20;

// One token's view of block b: its hi digit plane (the lo plane follows), its four groups'
// −Σ(256·hi + lo) and its ymm lane scales (lane 2g: group g's step).
struct PanelTokenBlock {
  const int8_t* hi;
  const int32_t* neg_sums;
  const float* steps;
};

// The block's −Σ(256·hi + lo): where its groups share a step, the one start of its digit chains.
inline int32_t block_neg_sum(const PanelTokenBlock& token) {
  return (token.neg_sums[0] + token.neg_sums[1]) + (token.neg_sums[2] + token.neg_sums[3]);
}

template <class Panel>
struct PanelScratch {
  GrowBuffer<uint8_t> codes;           // [2 panels][blocks][Panel::kBlockBytes]
  GrowBuffer<float> d_w;               // [2 panels][blocks][rows]
  GrowBuffer<int32_t> group_neg_sums;  // [chunk tokens][blocks][4], group_neg_sums()
  GrowBuffer<float> acc;               // [chunk tokens][2 panels][rows]
};

// Block b of a panel pair for the chunk's `count` tokens from `first` (acc: [count][2][rows]).
template <class Panel, bool kBlockSteps>
void panel_pair_block_tokens(const uint8_t* const codes[2], const float* const d_w[2], const QuantizedActs& a,
                             const int32_t* neg_sums, int64_t first, int64_t count, int64_t b, float* acc) {
  static_assert(Panel::kTokenTile <= 3, "the tail below handles at most two tokens");
  const int64_t blocks = a.blocks();
  const auto tile = [&]<int T>(int64_t t) {
    PanelTokenBlock tokens[T];
    float* out[T];
    for (int i = 0; i < T; ++i) {
      tokens[i] = PanelTokenBlock{a.token_q(first + t + i) + b * kActBlockBytes,
                                  neg_sums + ((t + i) * blocks + b) * kPanelGroups,
                                  a.token_ymm_scales(first + t + i) + b * kYmmLanes};
      out[i] = acc + (t + i) * 2 * Panel::kRows;
    }
    Panel::template pair_block<T, kBlockSteps>(codes, d_w, tokens, out);
  };
  int64_t t = 0;
  for (; t + Panel::kTokenTile <= count; t += Panel::kTokenTile)
    tile.template operator()<Panel::kTokenTile>(t);
  if (count - t == 2) tile.template operator()<2>(t);
  if (count - t == 1) tile.template operator()<1>(t);
}

// y[t · y_stride + r] for rows [row_begin, row_end) and every token of `a`.
template <class Panel, bool kBlockSteps>
void panel_rows_of(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end) {
  constexpr int kRows = Panel::kRows;
  constexpr int64_t kBlockBytes = Panel::kBlockBytes;
  thread_local PanelScratch<Panel> scratch;
  const int64_t blocks = a.blocks();
  const int64_t chunk = std::max<int64_t>(1, kPanelChunkBytes / (blocks * kActBlockBytes));
  const int64_t chunk_tokens = std::min(chunk, a.n_tokens);
  uint8_t* codes = scratch.codes.at_least(static_cast<size_t>(2 * blocks * kBlockBytes));
  float* d_w = scratch.d_w.at_least(static_cast<size_t>(2 * blocks * kRows));
  int32_t* neg_sums =
      scratch.group_neg_sums.at_least(static_cast<size_t>(chunk_tokens * blocks * kPanelGroups));
  float* acc = scratch.acc.at_least(static_cast<size_t>(chunk_tokens * 2 * kRows));
  for (int64_t first = 0; first < a.n_tokens; first += chunk) {
    const int64_t count = std::min(chunk, a.n_tokens - first);
    group_neg_sums(a, first, count, neg_sums);
    for (int64_t row = row_begin; row < row_end; row += 2 * kRows) {
      // A lone last panel runs as both panels of the pair; the copy's sums are not stored.
      const int valid[2] = {static_cast<int>(std::min<int64_t>(kRows, row_end - row)),
                            static_cast<int>(std::clamp<int64_t>(row_end - row - kRows, 0, kRows))};
      const int second = valid[1] > 0 ? 1 : 0;
      Panel::expand(w, row, valid[0], codes, d_w);
      if (second) Panel::expand(w, row + kRows, valid[1], codes + blocks * kBlockBytes, d_w + blocks * kRows);
      std::memset(acc, 0, static_cast<size_t>(count * 2 * kRows) * sizeof(float));
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* const block_codes[2] = {codes + b * kBlockBytes,
                                               codes + (second * blocks + b) * kBlockBytes};
        const float* const block_d_w[2] = {d_w + b * kRows, d_w + (second * blocks + b) * kRows};
        panel_pair_block_tokens<Panel, kBlockSteps>(block_codes, block_d_w, a, neg_sums, first, count, b,
                                                    acc);
      }
      for (int p = 0; p <= second; ++p)
        for (int64_t t = 0; t < count; ++t)
          Panel::store(y + (first + t) * y_stride + row + p * kRows, acc + (t * 2 + p) * kRows, valid[p]);
    }
  }
}

template <class Panel>
void panel_rows(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
                int64_t row_end) {
  if (a.block_steps()) {
    panel_rows_of<Panel, true>(y, y_stride, w, a, row_begin, row_end);
  } else {
    panel_rows_of<Panel, false>(y, y_stride, w, a, row_begin, row_end);
  }
}

}  // namespace tern::kernels::cpu
