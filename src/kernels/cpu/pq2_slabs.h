// Running a PQ2_0 row kernel on a matrix held in another form (trit planes, PQ2_0 panels): the rows are
// re-packed to PQ2_0 slab by slab in per-thread scratch (grown on first use only) and handed to the
// kernel. Exact on every CPU: the kernel sees the very codes and scales the form holds.
#pragma once

#include <cstdint>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

// Writes rows [row_begin, row_end) of w as PQ2_0 rows of w.cols / 128 blocks each, row i at
// out + (i − row_begin) · 34 · blocks.
using ToPq2Rows = void (*)(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);

// Rows [row_begin, row_end) of w, a row-wise form (w.type: trit planes, trit rows), as PQ2_0 rows by the
// scalar codec (quant::transcode_row): the ToPq2Rows of CPUs without the form's SIMD re-pack.
void transcode_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);

void rows_via_pq2(ToPq2Rows to_pq2, Pq2RowsKernel kernel, float* y, int64_t y_stride, const TernaryMatrix& w,
                  const QuantizedActs& a, int64_t row_begin, int64_t row_end);

}  // namespace tern::kernels::cpu
