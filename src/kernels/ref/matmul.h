// y = W · x for every row of a batch, reading W in its stored encoding (model-spec §5.0):
// ternary PQ2_0 / PTQ1_0 / Q2_0 / trit planes block by block (codes and fp16 scale decoded per block, never
// the whole tensor; PQ2_0 panels a row at a time to PQ2_0 first), and dense F32 / F16 / BF16 rows element
// by element. Dot products accumulate in double (§8.4) and each output is rounded once to fp32.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/matrix_view.h"

namespace tern::kernels::ref {

// One output: Σ_k W[row][k] · x[k] over w.cols values.
float dot_row(const MatrixView& w, int64_t row, const float* x);

// x: [n_tokens][w.cols], y: [n_tokens][w.rows]; y must not alias x.
void matmul(float* y, const MatrixView& w, const float* x, int64_t n_tokens);

// matmul for each target, over its own activations where it has them (MatmulTarget::x), else over
// x: [n_tokens][cols].
void matmul_shared(std::span<const MatmulTarget> targets, const float* x, int64_t n_tokens);

}  // namespace tern::kernels::ref
