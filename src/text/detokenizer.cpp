#include "text/detokenizer.h"

#include <string_view>

#include "text/utf8.h"

namespace tern::text {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string StreamingDetokenizer::push(int32_t id) {
  const std::string& bytes = tokenizer_.token_bytes(id);
  if (!render_special_ && tokenizer_.token_type(id) == TokenType::kControl) return {};
  pending_ += bytes;
  std::string out;
  std::string_view rest = pending_;
  while (!rest.empty()) {
    bool incomplete = false;
    const size_t valid = valid_utf8_prefix(rest, incomplete);
    out.append(rest.substr(0, valid));
    rest.remove_prefix(valid);
    if (rest.empty() || incomplete) break;
    // An invalid byte: replace it and go on after it.
    out.append(kReplacement);
    rest.remove_prefix(1);
  }
  pending_ = std::string(rest);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out = pending_.empty() ? std::string{} : std::string(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace tern::text
