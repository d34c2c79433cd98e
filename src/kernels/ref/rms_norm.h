// RMSNorm with the gain used exactly as stored (model-spec §5.0: the +1 is already baked into the
// file), and the gated per-head variant of the GDN block (§5.4).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// out[i] = gain[i] · x[i] / sqrt(mean_j x_j² + eps). Sum of squares and scaling in double.
// out may alias x.
void rms_norm(float* out, const float* x, const float* gain, int64_t n, float eps);

// out[i] = rms_norm(x; gain)[i] · silu(gate[i]) over one head of n values (HF Qwen3_5RMSNormGated).
// out may alias x.
void gated_rms_norm(float* out, const float* x, const float* gate, const float* gain, int64_t n, float eps);

}  // namespace tern::kernels::ref
