#include "text/stop_tokens.h"

#include <algorithm>

namespace tern::text {

std::vector<int32_t> end_of_generation_ids(const Vocab& vocab) {
  std::vector<int32_t> ids;
  if (vocab.eos_id && *vocab.eos_id < vocab.tokens.size()) ids.push_back(static_cast<int32_t>(*vocab.eos_id));
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.types[id] != TokenType::kControl && vocab.types[id] != TokenType::kUserDefined) continue;
    for (std::string_view text : kEndOfGenerationTexts) {
      if (vocab.tokens[id] == text) ids.push_back(static_cast<int32_t>(id));
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace tern::text
