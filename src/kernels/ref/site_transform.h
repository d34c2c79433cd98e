// The Hadamard activation sites (model-spec §4.2, §4.4): T_K before every folded matmul, T_K⁻¹ after
// the embedding gather. Rows of width K in a batch are transformed independently.
#pragma once

#include <cstdint>
#include <span>

namespace tern::kernels::ref {

// x: [n_tokens][width]; each row ← T_K(row) = blockdiag(H/√n)(s ⊙ row): signs, then transform.
// `signs` has `width` entries, or none under sign_mode identity.
void site_forward(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block);

// Each row ← T_K⁻¹(row) = s ⊙ blockdiag(H/√n) row: transform, then signs.
void site_inverse(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block);

}  // namespace tern::kernels::ref
