// Scalar activations (model-spec §5.0). Evaluated in double and rounded once to fp32, so the oracle
// carries one rounding per element whatever libm does in single precision.
#pragma once

#include <cmath>
#include <cstdint>

namespace tern::kernels::ref {

inline float sigmoid(float x) {
  return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x))));
}

// x·σ(x)
inline float silu(float x) {
  const double xd = x;
  return static_cast<float>(xd / (1.0 + std::exp(-xd)));
}

// log(1 + e^x), and x itself above the threshold 20 (ggml and PyTorch's default).
inline float softplus(float x) {
  if (x > 20.0f) return x;
  return static_cast<float>(std::log1p(std::exp(static_cast<double>(x))));
}

// out[i] ← silu(x[i]) over n values (out may be x).
inline void silu_values(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = silu(x[i]);
}

// SwiGLU (model-spec §5.5): gate[i] ← silu(gate[i]) · up[i] over n values.
inline void swiglu(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = silu(gate[i]) * up[i];
}

// The attention's output gate (model-spec §5.3): x[i] ← x[i] · σ(gate[i]) over n values.
inline void sigmoid_gate(float* x, const float* gate, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= sigmoid(gate[i]);
}

}  // namespace tern::kernels::ref
