#include "model/fold_coverage.h"

#include <fmt/format.h>

#include <set>

#include "core/error.h"

namespace tern::model {

std::vector<std::string> folded_weight_names(const Config& config) {
  std::vector<std::string> names;
  for (size_t l = 0; l < config.layers.size(); ++l) {
    const bool attention = config.layers[l] == LayerKind::kFullAttention;
    const auto kinds = attention ? std::vector<const char*>{"attn_q", "attn_k", "attn_v", "attn_output"}
                                 : std::vector<const char*>{"attn_qkv", "attn_gate", "ssm_out"};
    for (const char* kind : kinds) names.push_back(fmt::format("blk.{}.{}.weight", l, kind));
    for (const char* kind : {"ffn_gate", "ffn_up", "ffn_down"}) {
      names.push_back(fmt::format("blk.{}.{}.weight", l, kind));
    }
  }
  names.push_back("output.weight");
  return names;
}

void check_contract_covers(const hadamard::Contract& contract, const Config& config,
                           const gguf::Reader& file) {
  const std::vector<std::string> expected = folded_weight_names(config);
  const std::set<std::string> expected_set(expected.begin(), expected.end());
  for (const std::string& name : expected) {
    if (!contract.is_folded(name)) {
      fail(ErrorKind::kContract,
           "{}: prism.hadamard.weight_names: missing {}, which the qwen35 forward rotates", file.name(),
           name);
    }
  }
  for (const std::string& name : contract.weight_names) {
    if (!expected_set.contains(name)) {
      fail(ErrorKind::kContract,
           "{}: prism.hadamard.weight_names: lists {}, which the qwen35 forward does not rotate for this "
           "layer "
           "schedule",
           file.name(), name);
    }
  }
  const bool has_gdn = config.n_attention_layers() < static_cast<int64_t>(config.layers.size());
  if (has_gdn && !contract.gdn_v_grouped && config.gdn_n_v != config.gdn_n_k) {
    fail(ErrorKind::kContract,
         "{}: prism.hadamard.gdn_v_grouped: false or absent with n_v {} != n_k {}; tern implements only the "
         "grouped ssm_out column order (true)",
         file.name(), config.gdn_n_v, config.gdn_n_k);
  }
}

}  // namespace tern::model
