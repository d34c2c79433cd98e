// Reference blockwise sign + Walsh-Hadamard transform (model-spec §4.1, §4.7), plain fp32.
#pragma once

#include <cstdint>
#include <span>

namespace tern::hadamard {

// 1/sqrt(block) as the fp32 the reference runtime multiplies by before the butterflies.
float block_scale(int64_t block);

// In place, natural (Sylvester) order, unnormalised: x <- H_n x. n must be a power of two.
void fwht(float* x, int64_t n);

// T_K(x) = blockdiag(H_n/sqrt(n)) (s ⊙ x): signs first, then 1/sqrt(n) (scaled before the
// butterflies, as the reference runtime does), then the butterflies per block.
// `signs` has x.size() entries of ±1, or is empty for sign_mode identity.
void forward(std::span<float> x, std::span<const float> signs, int64_t block);
// T_K^{-1}(z) = s ⊙ (blockdiag(H_n/sqrt(n)) z): scale, butterflies, then signs.
void inverse(std::span<float> z, std::span<const float> signs, int64_t block);

}  // namespace tern::hadamard
