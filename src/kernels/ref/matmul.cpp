#include "kernels/ref/matmul.h"

#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "quant/codec.h"

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

double dot_pq2(const uint8_t* row, int64_t cols, const float* x) {
  double acc = 0.0;
  uint8_t codes[quant::kTernaryBlock];
  for (int64_t b = 0; b < cols / quant::kTernaryBlock; ++b) {
    uint16_t d_bits;
    quant::pq2_unpack(row + b * quant::kPq2Bytes, codes, &d_bits);
    acc += ternary_block(codes, quant::kTernaryBlock, d_bits, x + b * quant::kTernaryBlock);
  }
  return acc;
}

double dot_ptq1(const uint8_t* row, int64_t cols, const float* x) {
  double acc = 0.0;
  uint8_t trits[quant::kTernaryBlock];
  for (int64_t b = 0; b < cols / quant::kTernaryBlock; ++b) {
    uint16_t d_bits;
    quant::ptq1_unpack(row + b * quant::kPtq1Bytes, trits, &d_bits);
    acc += ternary_block(trits, quant::kTernaryBlock, d_bits, x + b * quant::kTernaryBlock);
  }
  return acc;
}

// Mainline Q2_0 (§3.1): {fp16 d; u8 qs[16]} per 64 values, code j at bits 2(j%4) of qs[j/4].
double dot_q2(const uint8_t* row, int64_t cols, const float* x) {
  constexpr int64_t kBlock = 64;
  constexpr size_t kBytes = 18;
  double acc = 0.0;
  uint8_t codes[kBlock];
  for (int64_t b = 0; b < cols / kBlock; ++b) {
    const uint8_t* block = row + b * kBytes;
    for (int64_t j = 0; j < kBlock; ++j) codes[j] = (block[2 + j / 4] >> (2 * (j % 4))) & 3u;
    acc += ternary_block(codes, kBlock, load_u16(block), x + b * kBlock);
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

}  // namespace

float dot_row(const MatrixView& w, int64_t row, const float* x) {
  const uint8_t* bytes = w.row(row);
  switch (w.type) {
    case quant::TensorType::kPQ2_0:
      return static_cast<float>(dot_pq2(bytes, w.cols, x));
    case quant::TensorType::kPTQ1_0:
      return static_cast<float>(dot_ptq1(bytes, w.cols, x));
    case quant::TensorType::kQ2_0:
      return static_cast<float>(dot_q2(bytes, w.cols, x));
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

}  // namespace tern::kernels::ref
