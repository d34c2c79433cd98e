// Tiny synthetic qwen35 files for model and runtime tests, made once per process with `tern synth`'s
// maker (the "tiny" preset has the geometry of model-spec §11.1: n_k ≥ 2, rep ≥ 2, mixed signs, three
// distinct folded widths, several Hadamard blocks per width).
#pragma once

#include <string>

#include "quant/types.h"

namespace tern::testing_support {

// Path of a tiny PQ2_0 model (written under the build tree on first use).
const std::string& tiny_pq2_model();
// The same model with every ternary tensor transcoded losslessly to PTQ1_0.
const std::string& tiny_ptq1_model();
// The same model as a dense mainline-llama.cpp-style file: every folded matrix unfolded to F32
// (w = T⁻¹(w') row-wise, the embedding rows e = T⁻¹(z)), ssm_out columns tiled, no prism keys.
const std::string& tiny_dense_model();

}  // namespace tern::testing_support
