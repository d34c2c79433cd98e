// Greedy pick over one row of logits (model-spec §8.2, §8.4): the lowest index wins a tie.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// n > 0. NaN entries never win (a NaN row returns 0).
int64_t argmax(const float* x, int64_t n);

}  // namespace tern::kernels::ref
