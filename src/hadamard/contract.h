// The prism.hadamard v1 contract (model-spec §2.6, §4.6): parsed, validated, and refused when tern
// cannot honour it. A folded model is never run unrotated.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gguf/reader.h"

namespace tern::hadamard {

struct Contract {
  uint32_t version = 1;
  int64_t block_size = 0;
  bool explicit_signs = true;                     // sign_mode explicit (false: identity)
  std::vector<int64_t> sign_widths;               // in file order
  std::map<int64_t, std::vector<float>> signs;    // width -> ±1 values
  std::vector<std::string> weight_names;          // forward-folded
  std::vector<std::string> inverse_weight_names;  // inverse-folded (token_embd.weight)
  bool gdn_v_grouped = false;

  // Signs for a folded weight of input width k; empty span under identity mode.
  // Throws Error(kContract) if explicit and there is no vector for k.
  std::span<const float> signs_for(int64_t k) const;
  bool is_folded(const std::string& tensor) const;
  bool is_inverse(const std::string& tensor) const;
};

// nullopt when the file has no prism.hadamard keys and no ternary tensors (a dense file).
// Throws Error(kContract) naming the key or tensor for anything §4.6 refuses.
std::optional<Contract> read_contract(const gguf::Reader& file);

}  // namespace tern::hadamard
