// Decode tokens' activations as this CPU's matmul quantises them (kernels/cpu/pq2_matmul.h): with block
// steps where decode is in the block order, else with group steps.
#pragma once

#include <cstdint>

#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"

namespace tern::testing_support {

// ActBuffer::quantize's block_steps_from for a run of decode tokens.
inline int64_t decode_block_steps_from() {
  return kernels::cpu::pq2_decode_in_block_order() ? 0 : kernels::cpu::kNoBlockSteps;
}

}  // namespace tern::testing_support
