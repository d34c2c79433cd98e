// y = W · x for the small dense (BF16, F16, F32) matrices of the model, the GDN decay projections
// ssm_alpha/ssm_beta: fp32 products and sums, several accumulators, rows over the pool.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/matrix_view.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

// y[r] = Σ_k W[r][k] · x[k] in fp32 for the rows r in [row_begin, row_end) of a BF16, F16 or F32 matrix.
using DenseRowsKernel = void (*)(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end,
                                 const float* x);

// Σ_k W[row][k] · x[k] in four fp32 chains over k mod 4 (the x86 kernels' tails go through it).
float dense_dot_scalar(const MatrixView& w, int64_t row, const float* x);

// Row by row through dense_dot_scalar.
void dense_rows_scalar(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x);
// Four eight-lane FMA chains over k mod 32, the tail through the scalar kernel. Needs AVX2 + FMA + F16C.
void dense_rows_avx2(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x);
// The AVX2 kernel's chains, two in each zmm, for four rows at a time (one load of x for four rows):
// the same bits, half the instructions. Needs AVX-512 F.
void dense_rows_avx512(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x);

DenseRowsKernel dense_rows_kernel();

// True for the types dense_matmul reads.
bool is_dense_type(quant::TensorType type);

// The rows of dense targets as pool tasks of a few rows, so that two 48-row matrices are one evenly
// shared pass, not two passes of three 16-row tasks over two threads. Each target reads its own
// activations (MatmulTarget::x) or else `x`: [n_tokens][cols]. The tasks run alone
// (dense_matmul_shared) or inside the ternary matmul's job over the same layer (pq2_matmul_shared), where
// their cold rows stream beside the ternary weights instead of in a job of their own.
class DenseTasks {
 public:
  DenseTasks(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens);

  int64_t count() const { return count_; }
  void run(int64_t task) const;

 private:
  std::span<const MatmulTarget> targets_;
  const float* x_;
  int64_t n_tokens_;
  int64_t count_ = 0;
};

// Every task of DenseTasks(targets, x, n_tokens) over the pool in one job. pool may be null.
void dense_matmul_shared(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens,
                         ThreadPool* pool);

}  // namespace tern::kernels::cpu
