// RMSNorm, gated RMSNorm, the L2 norm and the causal conv1d for the CPU backend: the oracle's contracts
// (kernels/ref/rms_norm.h, l2_norm.h, conv.h) and its double-precision arithmetic, element by element,
// vectorised over elements (norms) or channels (conv).
// - causal_conv sums each channel's taps in the oracle's order: the oracle's bits.
// - A norm adds its sum of squares in eight double lanes, not one: the scale can differ from the
//   oracle's in the last double bit, so an output can differ by one fp32 rounding at most; each output is
//   then the oracle's expression, gain · (x · scale) in double, rounded once.
// - gated_rms_norm's SiLU is silu.h's (fp32, a few ulps from the oracle's double one).
// Without AVX2 + FMA each is the oracle's function.
#pragma once

#include <cstdint>

namespace tern::kernels::cpu {

void rms_norm(float* out, const float* x, const float* gain, int64_t n, float eps);
void gated_rms_norm(float* out, const float* x, const float* gate, const float* gain, int64_t n, float eps);
void l2_norm(float* x, int64_t n, float eps);
void causal_conv(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                 int64_t channels, int64_t kernel);

// The AVX2 forms the functions above dispatch to (needs cpu_features().has_avx2_fma()).
namespace avx2 {
// 1 / sqrt(Σ x² / divisor + eps): divisor n gives RMSNorm's scale, 1 the L2 norm's.
double inverse_norm(const float* x, int64_t n, double divisor, float eps);
// out[i] = (float)(gain[i] · (x[i] · scale)), or (float)(x[i] · scale) where gain is null.
void scale_values(float* out, const float* x, const float* gain, double scale, int64_t n);
void causal_conv(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                 int64_t channels, int64_t kernel);
}  // namespace avx2

}  // namespace tern::kernels::cpu
