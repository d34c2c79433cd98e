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

// Σ_k W[row][k] · x[k] in fp32, for a row of type BF16, F16 or F32.
using DenseDotKernel = float (*)(const MatrixView& w, int64_t row, const float* x);

float dense_dot_scalar(const MatrixView& w, int64_t row, const float* x);
// Needs AVX2 + FMA + F16C.
float dense_dot_avx2(const MatrixView& w, int64_t row, const float* x);

DenseDotKernel dense_dot_kernel();

// True for the types dense_matmul reads.
bool is_dense_type(quant::TensorType type);

// Every target's y = W · x over one activation x: [n_tokens][cols], y: [n_tokens][w.rows] (the GDN's
// ssm_alpha and ssm_beta together). Their rows are split over the pool in one job, in tasks of a few rows,
// so two 48-row matrices are one evenly shared pass, not two passes of three 16-row tasks over two
// threads. pool may be null.
void dense_matmul_shared(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens,
                         ThreadPool* pool);

}  // namespace tern::kernels::cpu
