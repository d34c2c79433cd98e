// The tiling shared by the SIMD PQ2_0 kernels; included only by the per-ISA files (pq2_matmul_<isa>.cpp),
// which supply an Isa policy:
//   Isa::Codes                     a block's unpacked 2-bit codes (whatever the ISA keeps in registers)
//   Isa::Acc                       a vector of float partial sums
//   Isa::unpack(block) -> Codes    from a 34-byte PQ2_0 block, with its fp16 scale
//   Isa::zero() -> Acc
//   Isa::step(acc, codes, acts, b) -> Acc    acc + d_w · (block b of one token's activations)
//   Isa::sum(acc) -> float
// A tile of R rows × T tokens unpacks each weight block once and reuses it for T tokens, and reads each
// activation block once for R rows. sweep and rows take a Tiler (BlockTiles<Isa> for PQ2_0 blocks; the
// trit planes have their own, trit_planes_vbmi.cpp): a struct with
//   template <int R, int T> static void tile(y, y_stride, w, a, row, token)
#pragma once

#include <algorithm>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu::tiling {

template <class Isa, int R, int T>
void tile(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row,
          int64_t token) {
  const int64_t blocks = a.blocks();
  const uint8_t* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = w.data + static_cast<size_t>(row + r) * w.row_bytes;
  typename Isa::Acc acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = Isa::zero();

  // The R rows are one contiguous span; the next tile's span is fetched at the same pace, so the
  // short per-row streams of K = 5120 (40 blocks) do not wait for the hardware prefetcher to retrain.
  const uint8_t* next = rows[0] + R * static_cast<int64_t>(w.row_bytes);
  constexpr int64_t kSpanStep = R * static_cast<int64_t>(kPq2BlockBytes);
  for (int64_t b = 0; b < blocks; ++b) {
    if constexpr (T == 1) {
      for (int64_t line = 0; line < kSpanStep; line += 64) {
        __builtin_prefetch(next + b * kSpanStep + line, 0, 3);
      }
    }
    for (int r = 0; r < R; ++r) {
      const typename Isa::Codes codes = Isa::unpack(rows[r] + b * static_cast<int64_t>(kPq2BlockBytes));
      for (int t = 0; t < T; ++t) acc[r][t] = Isa::step(acc[r][t], codes, a, token + t, b);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[(token + t) * y_stride + row + r] = Isa::sum(acc[r][t]);
}

template <class Isa>
struct BlockTiles {
  template <int R, int T>
  static void tile(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row,
                   int64_t token) {
    tiling::tile<Isa, R, T>(y, y_stride, w, a, row, token);
  }
};

// All rows [row_begin, row_end) for tokens [token_begin, token_end), R rows × T tokens per tile.
template <class Tiler, int R, int T>
void sweep(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
           int64_t row_end, int64_t token_begin, int64_t token_end) {
  int64_t r = row_begin;
  for (; r + R <= row_end; r += R) {
    int64_t t = token_begin;
    for (; t + T <= token_end; t += T) Tiler::template tile<R, T>(y, y_stride, w, a, r, t);
    for (; t < token_end; ++t) Tiler::template tile<R, 1>(y, y_stride, w, a, r, t);
  }
  for (; r < row_end; ++r) {
    int64_t t = token_begin;
    for (; t + T <= token_end; t += T) Tiler::template tile<1, T>(y, y_stride, w, a, r, t);
    for (; t < token_end; ++t) Tiler::template tile<1, 1>(y, y_stride, w, a, r, t);
  }
}

// Decode: R_DECODE rows per tile of DecodeTiler (the same Tiler unless a kernel compiles its one-token
// tiles differently). Prefill: the tokens in chunks whose activations fit L2, each chunk swept with
// R_PREFILL × T_PREFILL tiles.
template <class Tiler, int R_DECODE, int R_PREFILL, int T_PREFILL, class DecodeTiler = Tiler>
void rows(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
          int64_t row_end) {
  if (a.n_tokens == 1) {
    sweep<DecodeTiler, R_DECODE, 1>(y, y_stride, w, a, row_begin, row_end, 0, 1);
    return;
  }
  const int64_t chunk = prompt_chunk_tokens(a.blocks() * kActBlockBytes, T_PREFILL);
  for (int64_t t = 0; t < a.n_tokens; t += chunk) {
    sweep<Tiler, R_PREFILL, T_PREFILL>(y, y_stride, w, a, row_begin, row_end, t,
                                       std::min(a.n_tokens, t + chunk));
  }
}

}  // namespace tern::kernels::cpu::tiling
