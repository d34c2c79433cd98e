// Rotary position embedding, NeoX pairing on the first rope_dim dims of one head (model-spec §5.3).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// For i in [0, rope_dim/2): θ_i = pos · theta^(−2i/rope_dim),
// (x_i, x_{i+half}) ← (x_i cos θ_i − x_{i+half} sin θ_i, x_{i+half} cos θ_i + x_i sin θ_i).
// Dims ≥ rope_dim are untouched. The angle, its cos/sin and the rotation are computed in double and
// rounded once to fp32 (HF computes the angle in fp32; the two differ in the last bits at large pos).
void rope_neox(float* x, int64_t rope_dim, int64_t pos, double theta);

}  // namespace tern::kernels::ref
