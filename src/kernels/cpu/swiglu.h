// SwiGLU for the CPU backend: gate[i] ← silu(gate[i]) · up[i] over n values, silu(x) = x / (1 + e^−x)
// in fp32 with the SIMD exponential (vector_exp.h): ref::swiglu (double, one rounding) up to a few fp32
// ulps for finite x, where silu(x) is not below ≈ 1e-37 (then ±0 or a denormal-sized value); a NaN stays
// NaN.
#pragma once

#include <cstdint>

namespace tern::kernels::cpu {

using SwigluKernel = void (*)(float* gate, const float* up, int64_t n);

void swiglu_scalar(float* gate, const float* up, int64_t n);
// Needs AVX2 + FMA (cpu_features().has_avx2_fma()).
void swiglu_avx2(float* gate, const float* up, int64_t n);
// Needs AVX-512 F (cpu_features().has_avx512_vnni() implies it).
void swiglu_avx512(float* gate, const float* up, int64_t n);

// The widest kernel the CPU runs (after the TERN_ISA cap).
SwigluKernel swiglu_kernel();

}  // namespace tern::kernels::cpu
