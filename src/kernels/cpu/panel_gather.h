// The 16-row weight panels of the AMX and AVX-512 panel kernels, whose rows are read by gathers with
// 32-bit byte offsets from a panel's first row. Included only by files compiled for AVX-512.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

inline constexpr int kPanelRows = 16;

// Whether every row of a panel lies within an int32 gather offset of its first; where not, the
// kernels hand the rows to pq2_rows_avx512_groups.
inline bool panel_offsets_fit(const TernaryMatrix& w) {
  return w.row_bytes <= static_cast<size_t>(std::numeric_limits<int32_t>::max() / kPanelRows);
}

// The byte offsets of a panel's rows from its first, for `valid` real rows: a short panel repeats its
// last row.
inline __m512i panel_row_offsets(const TernaryMatrix& w, int valid) {
  alignas(64) int32_t offsets[kPanelRows];
  for (int n = 0; n < kPanelRows; ++n)
    offsets[n] = static_cast<int32_t>(std::min(n, valid - 1)) * static_cast<int32_t>(w.row_bytes);
  return _mm512_load_si512(offsets);
}

}  // namespace tern::kernels::cpu
