#include "kernels/cpu/pq2_matmul.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace tern::kernels::cpu {

namespace {

// Rows handed to one thread are a multiple of this, so the row-interleaved fast paths see whole groups.
constexpr int64_t kRowGrain = 8;

// Σ (code − 1)·q over one block, per int32 lane of the SIMD kernels (lane = qs bytes 4l..4l+3).
void block_lane_dots(const uint8_t* qs, const int8_t* q, const int16_t* lane_sums, int32_t dots[8]) {
  for (int lane = 0; lane < 8; ++lane) {
    int32_t dot = -lane_sums[2 * lane] - lane_sums[2 * lane + 1];
    for (int s = 0; s < 4; ++s) {
      for (int i = 4 * lane; i < 4 * lane + 4; ++i) dot += ((qs[i] >> (2 * s)) & 3) * q[32 * s + i];
    }
    dots[lane] = dot;
  }
}

}  // namespace

void pq2_rows_scalar(float* y, int64_t y_stride, const Pq2Matrix& w, const QuantizedActs& a,
                     int64_t row_begin, int64_t row_end) {
  const int64_t blocks = a.blocks();
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const int8_t* q = a.token_q(t);
    const float* scales = a.token_lane_scales(t);
    const int16_t* sums = a.token_lane_sums(t);
    for (int64_t r = row_begin; r < row_end; ++r) {
      const uint8_t* row = w.data + static_cast<size_t>(r) * w.row_bytes;
      float acc = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = row + b * static_cast<int64_t>(kPq2BlockBytes);
        uint16_t d_bits;
        std::memcpy(&d_bits, block, sizeof d_bits);
        const float d_w = fp16_to_fp32(d_bits);
        int32_t dots[8];
        block_lane_dots(block + 2, q + b * kActBlock, sums + b * kLaneSums, dots);
        for (int lane = 0; lane < 8; ++lane) {
          acc += static_cast<float>(dots[lane]) * (d_w * scales[b * kLaneScales + lane]);
        }
      }
      y[t * y_stride + r] = acc;
    }
  }
}

Pq2RowsKernel pq2_rows_kernel() {
  return cpu_features().has_avx2_fma() ? pq2_rows_avx2 : pq2_rows_scalar;
}

void pq2_matmul(float* y, const Pq2Matrix& w, const QuantizedActs& a, ThreadPool* pool) {
  pq2_matmul(y, w, a, pool, pq2_rows_kernel());
}

void pq2_matmul(float* y, const Pq2Matrix& w, const QuantizedActs& a, ThreadPool* pool,
                Pq2RowsKernel kernel) {
  if (w.cols != a.k || w.cols % kActBlock != 0 || w.rows < 0 ||
      w.row_bytes < static_cast<size_t>(w.cols / kActBlock) * kPq2BlockBytes) {
    fail(ErrorKind::kInternal, "pq2_matmul: weight {}x{} (row {} bytes) does not match activations k={}",
         w.rows, w.cols, w.row_bytes, a.k);
  }
  const int threads = pool == nullptr ? 1 : pool->size();
  if (threads == 1 || w.rows < 2 * kRowGrain) {
    kernel(y, w.rows, w, a, 0, w.rows);
    return;
  }
  const int64_t groups = (w.rows + kRowGrain - 1) / kRowGrain;
  pool->for_each(threads, [&](int64_t part, int) {
    const int64_t begin = std::min(w.rows, groups * part / threads * kRowGrain);
    const int64_t end = std::min(w.rows, groups * (part + 1) / threads * kRowGrain);
    if (begin < end) kernel(y, w.rows, w, a, begin, end);
  });
}

}  // namespace tern::kernels::cpu
