// `tern convert`: losslessly re-pack every ternary tensor of a GGUF into another ternary type
// (PQ2_0, PTQ1_0 or mainline group-64 Q2_0), streaming row by row (model-spec §3.5).
#pragma once

#include <cstdint>
#include <string>

#include "quant/types.h"

namespace tern::tools {

struct ConvertSummary {
  int64_t repacked_tensors = 0;  // ternary tensors whose type changed
  int64_t copied_tensors = 0;    // tensors copied byte for byte
  uint64_t input_bytes = 0;      // file sizes
  uint64_t output_bytes = 0;
};

// Every metadata key is kept, in order and with its GGUF type, except general.file_type, which is set
// to the llama ftype of the target (file_type_for). Non-ternary tensors are copied byte-identically.
// Throws Error(kInput) for a non-ternary target, Error(kContract) if the input's prism.hadamard
// contract is refused, Error(kFormat) if a PQ2_0 block holds code 3 and the target cannot represent it.
ConvertSummary convert_model(const std::string& input, const std::string& output, quant::TensorType target);

// general.file_type for a file whose ternary tensors are all `target` (model-spec §2.3).
uint32_t file_type_for(quant::TensorType target);

}  // namespace tern::tools
