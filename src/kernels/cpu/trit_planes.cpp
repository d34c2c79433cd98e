#include "kernels/cpu/trit_planes.h"

#include <algorithm>

#include "core/cpu_features.h"
#include "kernels/cpu/grow_buffer.h"
#include "quant/codec.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kSlabRows = 1024;

void rows_via_pq2(Pq2RowsKernel kernel, float* y, int64_t y_stride, const TernaryMatrix& w,
                  const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  const size_t pq2_row = static_cast<size_t>(w.cols / kActBlock) * kPq2BlockBytes;
  thread_local GrowBuffer<uint8_t> scratch;
  uint8_t* slab = scratch.at_least(pq2_row * static_cast<size_t>(std::min(kSlabRows, row_end - row_begin)));
  for (int64_t first = row_begin; first < row_end; first += kSlabRows) {
    const int64_t rows = std::min(kSlabRows, row_end - first);
    trit_planes_to_pq2(w, first, first + rows, slab);
    const TernaryMatrix pq2{slab, rows, w.cols, pq2_row, quant::TensorType::kPQ2_0};
    kernel(y + first, y_stride, pq2, a, 0, rows);
  }
}

}  // namespace

Pq2RowsKernel trit_planes_decode_kernel() {
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) return trit_planes_rows_pairs;
#endif
  return trit_planes_rows_repacked;
}

void trit_planes_rows_prompt(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  rows_via_pq2(pq2_prompt_kernel(a.n_tokens), y, y_stride, w, a, row_begin, row_end);
}

void trit_planes_rows_repacked(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                               int64_t row_begin, int64_t row_end) {
  rows_via_pq2(pq2_decode_kernel(), y, y_stride, w, a, row_begin, row_end);
}

void trit_planes_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) {
    trit_planes_to_pq2_vbmi(w, row_begin, row_end, out);
    return;
  }
#endif
  const size_t pq2_row = static_cast<size_t>(w.cols / kActBlock) * kPq2BlockBytes;
  for (int64_t r = row_begin; r < row_end; ++r) {
    quant::transcode_row(quant::TensorType::kTritPlanes, quant::TensorType::kPQ2_0,
                         w.data + static_cast<size_t>(r) * w.row_bytes,
                         out + static_cast<size_t>(r - row_begin) * pq2_row, w.cols, "trit planes");
  }
}

}  // namespace tern::kernels::cpu
