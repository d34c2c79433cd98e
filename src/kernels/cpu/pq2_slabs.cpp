#include "kernels/cpu/pq2_slabs.h"

#include <algorithm>

#include "kernels/cpu/grow_buffer.h"
#include "quant/codec.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kSlabRows = 1024;

}  // namespace

void transcode_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
  const size_t pq2_row = static_cast<size_t>(w.cols / kActBlock) * kPq2BlockBytes;
  for (int64_t r = row_begin; r < row_end; ++r) {
    quant::transcode_row(w.type, quant::TensorType::kPQ2_0, w.data + static_cast<size_t>(r) * w.row_bytes,
                         out + static_cast<size_t>(r - row_begin) * pq2_row, w.cols,
                         quant::traits(w.type).name.data());
  }
}

void rows_via_pq2(ToPq2Rows to_pq2, Pq2RowsKernel kernel, float* y, int64_t y_stride, const TernaryMatrix& w,
                  const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  const size_t pq2_row = static_cast<size_t>(w.cols / kActBlock) * kPq2BlockBytes;
  thread_local GrowBuffer<uint8_t> scratch;
  uint8_t* slab = scratch.at_least(pq2_row * static_cast<size_t>(std::min(kSlabRows, row_end - row_begin)));
  for (int64_t first = row_begin; first < row_end; first += kSlabRows) {
    const int64_t rows = std::min(kSlabRows, row_end - first);
    to_pq2(w, first, first + rows, slab);
    const TernaryMatrix pq2{slab, rows, w.cols, pq2_row, quant::TensorType::kPQ2_0};
    kernel(y + first, y_stride, pq2, a, 0, rows);
  }
}

}  // namespace tern::kernels::cpu
