#include "kernels/ref/matmul.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "quant/codec.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"
#include "quant/trit_planes.h"
#include "quant/trit_rows.h"

namespace tern::kernels::ref {

namespace {

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Σ_j (code_j − 1) · x_j over one block, times the block's fp32 scale.
double ternary_block(const uint8_t codes[], int64_t n, uint16_t d_bits, const float* x) {
  double acc = 0.0;
  for (int64_t j = 0; j < n; ++j) acc += static_cast<double>(static_cast<int>(codes[j]) - 1) * x[j];
  return acc * static_cast<double>(fp16_to_fp32(d_bits));
}

// PQ2_0 (§3.3) and mainline Q2_0 (§3.1) share one block layout: {fp16 d; u8 qs[n/4]}, code j at
// bits 2(j%4) of qs[j/4], value (code − 1)·d (code 3 is +2d). Decoded in place, byte by byte.
double dot_2bit_blocks(const uint8_t* row, int64_t cols, int64_t block_elems, const float* x) {
  static constexpr double kCodeValue[4] = {-1.0, 0.0, 1.0, 2.0};
  const size_t block_bytes = 2 + static_cast<size_t>(block_elems) / 4;
  double acc = 0.0;
  for (int64_t b = 0; b < cols / block_elems; ++b) {
    const uint8_t* block = row + static_cast<size_t>(b) * block_bytes;
    const uint8_t* qs = block + 2;
    const float* xb = x + b * block_elems;
    double block_acc = 0.0;
    for (int64_t i = 0; i < block_elems / 4; ++i) {
      const unsigned q = qs[i];
      block_acc += kCodeValue[q & 3u] * xb[4 * i] + kCodeValue[(q >> 2) & 3u] * xb[4 * i + 1] +
                   kCodeValue[(q >> 4) & 3u] * xb[4 * i + 2] + kCodeValue[(q >> 6) & 3u] * xb[4 * i + 3];
    }
    acc += block_acc * static_cast<double>(fp16_to_fp32(load_u16(block)));
  }
  return acc;
}

// Σ over the blocks of a row whose 128 trits and scale `unpack(row, cols, b, trits, &d_bits)` decodes.
template <class Unpack>
double dot_trit_blocks(const uint8_t* row, int64_t cols, const float* x, Unpack unpack) {
  double acc = 0.0;
  uint8_t trits[quant::kTernaryBlock];
  for (int64_t b = 0; b < cols / quant::kTernaryBlock; ++b) {
    uint16_t d_bits;
    unpack(row, cols, b, trits, &d_bits);
    acc += ternary_block(trits, quant::kTernaryBlock, d_bits, x + b * quant::kTernaryBlock);
  }
  return acc;
}

double dot_f32(const uint8_t* row, int64_t cols, const float* x) {
  double acc = 0.0;
  for (int64_t k = 0; k < cols; ++k) {
    float w;
    std::memcpy(&w, row + 4 * k, sizeof w);
    acc += static_cast<double>(w) * x[k];
  }
  return acc;
}

double dot_f16(const uint8_t* row, int64_t cols, const float* x) {
  double acc = 0.0;
  for (int64_t k = 0; k < cols; ++k) acc += static_cast<double>(fp16_to_fp32(load_u16(row + 2 * k))) * x[k];
  return acc;
}

double dot_bf16(const uint8_t* row, int64_t cols, const float* x) {
  double acc = 0.0;
  for (int64_t k = 0; k < cols; ++k) acc += static_cast<double>(bf16_to_fp32(load_u16(row + 2 * k))) * x[k];
  return acc;
}

// Row `row` of a panel-form matrix as PQ2_0 bytes, in a buffer of this thread's that only grows: the oracle
// then reads exactly the bytes it reads in the rows form, with no allocation a call once warm.
const uint8_t* pq2_row_of_panels(const MatrixView& w, int64_t row) {
  thread_local std::vector<uint8_t> buffer;
  const size_t row_bytes = static_cast<size_t>(w.cols / quant::kTernaryBlock) * quant::kPq2Bytes;
  if (buffer.size() < row_bytes) buffer.resize(row_bytes);
  quant::pq2_panels_to_rows(w.data, w.cols, row, row + 1, buffer.data());
  return buffer.data();
}

}  // namespace

float dot_row(const MatrixView& w, int64_t row, const float* x) {
  const uint8_t* bytes = w.row(row);
  switch (w.type) {
    case quant::TensorType::kPQ2_0:
      return static_cast<float>(dot_2bit_blocks(bytes, w.cols, quant::kTernaryBlock, x));
    case quant::TensorType::kPq2Panels:
      return static_cast<float>(dot_2bit_blocks(pq2_row_of_panels(w, row), w.cols, quant::kTernaryBlock, x));
    case quant::TensorType::kPTQ1_0:
      return static_cast<float>(dot_trit_blocks(
          bytes, w.cols, x, [](const uint8_t* data, int64_t, int64_t b, uint8_t* trits, uint16_t* d_bits) {
            quant::ptq1_unpack(data + b * static_cast<int64_t>(quant::kPtq1Bytes), trits, d_bits);
          }));
    case quant::TensorType::kTritPlanes:
      return static_cast<float>(dot_trit_blocks(bytes, w.cols, x, quant::trit_planes_load_block));
    case quant::TensorType::kTritRows:
      return static_cast<float>(dot_trit_blocks(bytes, w.cols, x, quant::trit_rows_load_block));
    case quant::TensorType::kTritPanels:  // the panels hold no row of their own: w.data and the row
      return static_cast<float>(dot_trit_blocks(
          w.data, w.cols, x,
          [row](const uint8_t* panels, int64_t k, int64_t b, uint8_t* codes, uint16_t* d_bits) {
            quant::trit_panels_load_block(panels, k, row, b, codes, d_bits);
          }));
    case quant::TensorType::kQ2_0:
      return static_cast<float>(dot_2bit_blocks(bytes, w.cols, 64, x));
    case quant::TensorType::kF32:
      return static_cast<float>(dot_f32(bytes, w.cols, x));
    case quant::TensorType::kF16:
      return static_cast<float>(dot_f16(bytes, w.cols, x));
    case quant::TensorType::kBF16:
      return static_cast<float>(dot_bf16(bytes, w.cols, x));
  }
  fail(ErrorKind::kInternal, "matmul: unhandled tensor type {}", static_cast<uint32_t>(w.type));
}

void matmul(float* y, const MatrixView& w, const float* x, int64_t n_tokens) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * w.cols;
    float* yt = y + t * w.rows;
    for (int64_t r = 0; r < w.rows; ++r) yt[r] = dot_row(w, r, xt);
  }
}

void matmul_shared(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens) {
  for (const MatmulTarget& t : targets) matmul(t.y, t.w, t.x != nullptr ? t.x : x, n_tokens);
}

}  // namespace tern::kernels::ref
