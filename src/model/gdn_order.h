// GDN value-head orders (model-spec §4.5). With n_k q/k heads and rep = n_v / n_k:
//   grouped (HF) order: head g = k·rep + r reads q/k head g / rep;
//   tiled (llama.cpp) order: slot j = r·n_k + k holds grouped head (j mod n_k)·rep + j / n_k.
// The converter stores seven GDN tensors tiled; tern computes in grouped order (Option B).
#pragma once

#include <cstdint>

namespace tern::model {

// The tiled slot holding grouped head g.
inline int64_t tiled_slot_of_grouped(int64_t g, int64_t n_k, int64_t rep) {
  return (g % rep) * n_k + g / rep;
}

// dst (grouped) ← src (tiled), n_k·rep heads of head_size contiguous values each. dst must not alias src.
void untile_heads(float* dst, const float* src, int64_t n_k, int64_t rep, int64_t head_size);
// dst (tiled) ← src (grouped): the converter's permutation. dst must not alias src.
void tile_heads(float* dst, const float* src, int64_t n_k, int64_t rep, int64_t head_size);

}  // namespace tern::model
