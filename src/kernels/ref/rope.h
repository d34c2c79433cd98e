// Rotary position embedding, NeoX pairing on the first rope_dim dims of one head (model-spec §5.3).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// For i in [0, rope_dim/2): θ_i = pos · theta^(−2i/rope_dim), written as cos_sin[i] = cos θ_i and
// cos_sin[rope_dim/2 + i] = sin θ_i (rope_dim values in all), in double. They depend on the position
// only, so the forward computes them once a token for every head of every attention layer.
void rope_angles(double* cos_sin, int64_t rope_dim, int64_t pos, double theta);

// (x_i, x_{i+half}) ← (x_i cos θ_i − x_{i+half} sin θ_i, x_{i+half} cos θ_i + x_i sin θ_i) with the
// angles of rope_angles; dims ≥ rope_dim are untouched. The rotation is computed in double and rounded
// once to fp32 (HF computes the angle in fp32; the two differ in the last bits at large pos).
void rope_rotate(float* x, int64_t rope_dim, const double* cos_sin);

}  // namespace tern::kernels::ref
