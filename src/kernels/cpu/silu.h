// SiLU and the sigmoid gate for the CPU backend. SiLU: out[i] ← silu(x[i]) · up[i] (SwiGLU), or silu(x[i])
// where up is null, over n values (out may be x). silu(x) = x / (1 + e^−x) in fp32 with the SIMD exponential
// (vector_exp.h): ref::silu (double, one rounding) up to a few fp32 ulps for finite x, where silu(x) is not
// below ≈ 1e-37 (then ±0 or a denormal-sized value); a NaN stays NaN.
#pragma once

#include <cstdint>

namespace tern::kernels::cpu {

using SiluKernel = void (*)(float* out, const float* x, const float* up, int64_t n);

void silu_scalar(float* out, const float* x, const float* up, int64_t n);
// Needs AVX2 + FMA (cpu_features().has_avx2_fma()).
void silu_avx2(float* out, const float* x, const float* up, int64_t n);
// Needs AVX-512 F (cpu_features().has_avx512_vnni() implies it).
void silu_avx512(float* out, const float* x, const float* up, int64_t n);

// The widest kernel the CPU runs (after the TERN_ISA cap).
SiluKernel silu_kernel();

// The attention's output gate: x[i] ← x[i] · σ(gate[i]) = x[i] / (1 + e^−gate[i]) over n values, with the
// same exponential: ref::sigmoid_gate up to a few fp32 ulps.
using SigmoidGateKernel = void (*)(float* x, const float* gate, int64_t n);

void sigmoid_gate_scalar(float* x, const float* gate, int64_t n);
void sigmoid_gate_avx2(float* x, const float* gate, int64_t n);    // AVX2 + FMA
void sigmoid_gate_avx512(float* x, const float* gate, int64_t n);  // AVX-512 F
SigmoidGateKernel sigmoid_gate_kernel();

}  // namespace tern::kernels::cpu
