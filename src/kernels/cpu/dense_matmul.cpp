#include "kernels/cpu/dense_matmul.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kRowsPerTask = 8;  // 80 KB of a 5120-wide BF16 matrix

int64_t tasks_of(const MatmulTarget& t) {
  return (t.w.rows + kRowsPerTask - 1) / kRowsPerTask;
}

float element(const MatrixView& w, const uint8_t* row, int64_t k) {
  switch (w.type) {
    case quant::TensorType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, row + 2 * k, sizeof bits);
      return bf16_to_fp32(bits);
    }
    case quant::TensorType::kF16: {
      uint16_t bits;
      std::memcpy(&bits, row + 2 * k, sizeof bits);
      return fp16_to_fp32(bits);
    }
    default: {
      float value;
      std::memcpy(&value, row + 4 * k, sizeof value);
      return value;
    }
  }
}

}  // namespace

bool is_dense_type(quant::TensorType type) {
  return type == quant::TensorType::kBF16 || type == quant::TensorType::kF16 ||
         type == quant::TensorType::kF32;
}

float dense_dot_scalar(const MatrixView& w, int64_t row, const float* x) {
  const uint8_t* r = w.row(row);
  float acc[4] = {0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 4 <= w.cols; k += 4) {
    for (int j = 0; j < 4; ++j) acc[j] += element(w, r, k + j) * x[k + j];
  }
  for (; k < w.cols; ++k) acc[0] += element(w, r, k) * x[k];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

void dense_rows_scalar(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x) {
  for (int64_t r = row_begin; r < row_end; ++r) y[r] = dense_dot_scalar(w, r, x);
}

DenseRowsKernel dense_rows_kernel() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx2_fma() && cpu.avx512f) return dense_rows_avx512;
  if (cpu.has_avx2_fma()) return dense_rows_avx2;
#endif
  return dense_rows_scalar;
}

DenseTasks::DenseTasks(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens)
    : targets_(targets), x_(x), n_tokens_(n_tokens) {
  for (const MatmulTarget& t : targets) count_ += tasks_of(t);
}

void DenseTasks::run(int64_t task) const {
  static const DenseRowsKernel kernel = dense_rows_kernel();
  for (const MatmulTarget& t : targets_) {
    if (task >= tasks_of(t)) {
      task -= tasks_of(t);
      continue;
    }
    const float* x = t.x != nullptr ? t.x : x_;
    const int64_t end = std::min(t.w.rows, (task + 1) * kRowsPerTask);
    for (int64_t token = 0; token < n_tokens_; ++token)
      kernel(t.y + token * t.w.rows, t.w, task * kRowsPerTask, end, x + token * t.w.cols);
    return;
  }
}

void dense_matmul_shared(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens,
                         ThreadPool* pool) {
  const DenseTasks tasks(targets, x, n_tokens);
  if (pool == nullptr) {
    for (int64_t task = 0; task < tasks.count(); ++task) tasks.run(task);
  } else {
    pool->for_each(tasks.count(), [&](int64_t task, int) { tasks.run(task); });
  }
}

}  // namespace tern::kernels::cpu
