// The 16-row weight panels of the AMX and AVX-512 panel kernels: from PQ2_0 rows, read by gathers with
// 32-bit byte offsets from a panel's first row, or loaded from PQ2_0 panels, whose stored vectors are the
// gathered ones. Included only by files compiled for AVX-512.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/cpu/pq2_matmul.h"
#include "quant/pq2_panels.h"

namespace tern::kernels::cpu {

inline constexpr int kPanelRows = 16;

// The panel kernels' prologue: true where they have nothing to compute themselves, an empty range or
// no tokens, or rows too far apart for int32 gather offsets, which it hands to pq2_rows_avx512_groups
// (the same bits).
inline bool panels_not_needed(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                              int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end || a.n_tokens == 0) return true;
  if (w.row_bytes <= static_cast<size_t>(std::numeric_limits<int32_t>::max() / kPanelRows)) return false;
  pq2_rows_avx512_groups(y, y_stride, w, a, row_begin, row_end);
  return true;
}

// The AMX kernels' prologue: their tiles sum a block before scaling it, which is the group order only
// under block steps (act_quant.h), so activations with group steps go to `groups` (the same bits).
// Returns true where it handed them over.
inline bool group_steps_handed_to(Pq2RowsKernel groups, float* y, int64_t y_stride, const TernaryMatrix& w,
                                  const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  if (a.block_steps()) return false;
  groups(y, y_stride, w, a, row_begin, row_end);
  return true;
}

// The byte offsets of a panel's rows from its first, for `valid` real rows: a short panel repeats its
// last row.
inline __m512i panel_row_offsets(const TernaryMatrix& w, int valid) {
  alignas(64) int32_t offsets[kPanelRows];
  for (int n = 0; n < kPanelRows; ++n)
    offsets[n] = static_cast<int32_t>(std::min(n, valid - 1)) * static_cast<int32_t>(w.row_bytes);
  return _mm512_load_si512(offsets);
}

// Walks rows [row, row + valid) over blocks [block_begin, block_end): d_w[16·b + r] = row r's scale of
// block b as fp32, and for each of the block's eight qs dwords, emit(b, dword, qs) with lane r of qs that
// dword of row r.
template <class Emit>
void gather_panel(const TernaryMatrix& w, int64_t row, int valid, int64_t block_begin, int64_t block_end,
                  float* d_w, Emit&& emit) {
  const __m512i rows = panel_row_offsets(w, valid);
  const uint8_t* base = w.data + static_cast<size_t>(row) * w.row_bytes;
  for (int64_t b = block_begin; b < block_end; ++b) {
    const uint8_t* block = base + b * static_cast<int64_t>(kPq2BlockBytes);
    const __m512i scale_bits = _mm512_i32gather_epi32(rows, block, 1);  // low 16 bits: fp16 d
    _mm512_store_ps(d_w + b * kPanelRows, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(scale_bits)));
    for (int dword = 0; dword < 8; ++dword)
      emit(b, dword, _mm512_i32gather_epi32(rows, block + 2 + 4 * dword, 1));
  }
}

// gather_panel's walk on the stored panel that starts at `row` of a PQ2_0 panels matrix (rows past the
// matrix are stored as zeros): per block its d_w, then emit(b, dword, qs) with stored vector 8b + dword.
template <class Emit>
void load_stored_panel(const TernaryMatrix& w, int64_t row, int64_t block_begin, int64_t block_end,
                       float* d_w, Emit&& emit) {
  const uint8_t* panel = w.data + static_cast<size_t>(row / kPanelRows) * quant::pq2_panel_bytes(w.cols);
  const uint8_t* vectors = panel + quant::pq2_panel_scale_bytes(w.cols);
  for (int64_t b = block_begin; b < block_end; ++b) {
    const __m256i scales = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + 32 * b));
    _mm512_store_ps(d_w + b * kPanelRows, _mm512_cvtph_ps(scales));
    for (int dword = 0; dword < 8; ++dword)
      emit(b, dword, _mm512_loadu_si512(vectors + (8 * b + dword) * 64));
  }
}

}  // namespace tern::kernels::cpu
