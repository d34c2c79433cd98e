#include "model/gdn_order.h"

#include <algorithm>

namespace tern::model {

void untile_heads(float* dst, const float* src, int64_t n_k, int64_t rep, int64_t head_size) {
  for (int64_t g = 0; g < n_k * rep; ++g) {
    const float* from = src + tiled_slot_of_grouped(g, n_k, rep) * head_size;
    std::copy(from, from + head_size, dst + g * head_size);
  }
}

void tile_heads(float* dst, const float* src, int64_t n_k, int64_t rep, int64_t head_size) {
  for (int64_t g = 0; g < n_k * rep; ++g) {
    const float* from = src + g * head_size;
    std::copy(from, from + head_size, dst + tiled_slot_of_grouped(g, n_k, rep) * head_size);
  }
}

}  // namespace tern::model
