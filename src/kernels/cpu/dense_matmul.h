// y = W · x for the small dense (BF16, F16, F32) matrices of the model, the GDN decay projections
// ssm_alpha/ssm_beta: fp32 products and sums, several accumulators, rows over the pool.
#pragma once

#include <cstdint>

#include "kernels/matrix_view.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

// Σ_k W[row][k] · x[k] in fp32, for a row of type BF16, F16 or F32.
using DenseDotKernel = float (*)(const MatrixView& w, int64_t row, const float* x);

float dense_dot_scalar(const MatrixView& w, int64_t row, const float* x);
// Needs AVX2 + FMA + F16C.
float dense_dot_avx2(const MatrixView& w, int64_t row, const float* x);

DenseDotKernel dense_dot_kernel();

// True for the types dense_matmul reads.
bool is_dense_type(quant::TensorType type);

// x: [n_tokens][w.cols], y: [n_tokens][w.rows]; pool may be null.
void dense_matmul(float* y, const MatrixView& w, const float* x, int64_t n_tokens, ThreadPool* pool);

}  // namespace tern::kernels::cpu
