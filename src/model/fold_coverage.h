// What the qwen35 forward pass rotates, checked against a file's prism.hadamard contract
// (model-spec §4.6 rules 7 ⊕ and 10, §11.2). Lives in model/ because it needs the layer kinds.
#pragma once

#include <string>
#include <vector>

#include "gguf/reader.h"
#include "hadamard/contract.h"
#include "model/config.h"

namespace tern::model {

// Every forward-folded weight of a qwen35 model in forward order: per layer attn_q/k/v/output
// (attention) or attn_qkv/attn_gate/ssm_out (GDN), then ffn_gate/up/down; last output.weight.
std::vector<std::string> folded_weight_names(const Config& config);

// Throws Error(kContract) naming the key and tensor when prism.hadamard.weight_names differs from
// folded_weight_names(config) in either direction, or when gdn_v_grouped is false/absent while
// n_v != n_k (tern implements only the grouped ssm_out column order, model-spec §11.2).
void check_contract_covers(const hadamard::Contract& contract, const Config& config,
                           const gguf::Reader& file);

}  // namespace tern::model
