#include "tools/bpe_trainer.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tern::tools {

namespace {

bool printable_byte(uint8_t b) {
  return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
}

std::string utf8(uint32_t codepoint) {
  std::string s;
  if (codepoint < 0x80) {
    s += static_cast<char>(codepoint);
  } else {  // the byte alphabet stays below U+0800
    s += static_cast<char>(0xc0 | (codepoint >> 6));
    s += static_cast<char>(0x80 | (codepoint & 0x3f));
  }
  return s;
}

bool is_letter(uint8_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}
bool is_digit(uint8_t c) {
  return c >= '0' && c <= '9';
}
bool is_newline(uint8_t c) {
  return c == '\r' || c == '\n';
}
bool is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v' || is_newline(c);
}
bool is_punct(uint8_t c) {
  return !is_space(c) && !is_letter(c) && !is_digit(c);
}

size_t contraction_length(std::string_view text, size_t i) {
  if (text[i] != '\'') return 0;
  for (const std::string_view suffix : {"re", "ve", "ll", "s", "t", "m", "d"}) {
    if (text.size() - i - 1 < suffix.size()) continue;
    bool match = true;
    for (size_t k = 0; k < suffix.size(); ++k) {
      const char c = text[i + 1 + k];
      match = match && (c == suffix[k] || c == suffix[k] - 'a' + 'A');
    }
    if (match) return 1 + suffix.size();
  }
  return 0;
}

// Length of the piece starting at i (§7.2 alternatives, leftmost first).
size_t piece_length(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const size_t n = text.size();
  if (const size_t c = contraction_length(text, i)) return c;
  size_t j = i;
  if (!is_newline(at(j)) && !is_letter(at(j)) && !is_digit(at(j)) && j + 1 < n && is_letter(at(j + 1))) ++j;
  if (is_letter(at(j))) {
    while (j < n && is_letter(at(j))) ++j;
    return j - i;
  }
  if (is_digit(at(i))) return 1;
  j = i;
  if (at(j) == ' ' && j + 1 < n && is_punct(at(j + 1))) ++j;
  if (is_punct(at(j))) {
    while (j < n && is_punct(at(j))) ++j;
    while (j < n && is_newline(at(j))) ++j;
    return j - i;
  }
  size_t end = i;  // a whitespace run
  while (end < n && is_space(at(end))) ++end;
  size_t last_newline = end;
  for (size_t k = i; k < end; ++k) {
    if (is_newline(at(k))) last_newline = k;
  }
  if (last_newline != end) return last_newline + 1 - i;  // \s*[\r\n]+
  if (end < n && end - i > 1) return end - 1 - i;        // \s+(?!\S)
  return end - i;                                        // \s+
}

using Word = std::vector<int32_t>;

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

std::string byte_symbol(uint8_t byte) {
  if (printable_byte(byte)) return utf8(byte);
  uint32_t rank = 0;  // position among the non-printable bytes
  for (uint32_t b = 0; b < byte; ++b) {
    if (!printable_byte(static_cast<uint8_t>(b))) ++rank;
  }
  return utf8(256 + rank);
}

std::vector<std::string_view> pre_split(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < text.size();) {
    const size_t len = piece_length(text, i);
    pieces.push_back(text.substr(i, len));
    i += len;
  }
  return pieces;
}

BpeModel train_bpe(std::string_view corpus, size_t max_tokens) {
  BpeModel model;
  std::unordered_map<std::string, int32_t> token_id;
  for (int b = 0; b < 256; ++b) {
    model.tokens.push_back(byte_symbol(static_cast<uint8_t>(b)));
    token_id.emplace(model.tokens.back(), b);
  }

  std::map<std::string_view, int64_t> counts;  // ordered: deterministic word order
  for (const std::string_view piece : pre_split(corpus)) ++counts[piece];
  std::vector<Word> words;
  std::vector<int64_t> word_counts;
  for (const auto& [piece, count] : counts) {
    Word w;
    for (const char c : piece) w.push_back(static_cast<uint8_t>(c));
    words.push_back(std::move(w));
    word_counts.push_back(count);
  }

  while (model.tokens.size() < max_tokens) {
    std::unordered_map<uint64_t, int64_t> pairs;
    for (size_t w = 0; w < words.size(); ++w) {
      for (size_t k = 0; k + 1 < words[w].size(); ++k)
        pairs[pair_key(words[w][k], words[w][k + 1])] += word_counts[w];
    }
    int64_t best_count = 1;
    int32_t best_left = -1;
    int32_t best_right = -1;
    for (const auto& [key, count] : pairs) {
      const auto left = static_cast<int32_t>(key >> 32);
      const auto right = static_cast<int32_t>(key & 0xffffffffu);
      const bool better =
          count > best_count || (count == best_count && best_left >= 0 &&
                                 std::tie(model.tokens[left], model.tokens[right]) <
                                     std::tie(model.tokens[best_left], model.tokens[best_right]));
      if (better) {
        best_count = count;
        best_left = left;
        best_right = right;
      }
    }
    if (best_left < 0) break;  // no pair occurs twice

    const std::string merged = model.tokens[best_left] + model.tokens[best_right];
    model.merges.emplace_back(model.tokens[best_left], model.tokens[best_right]);
    auto [it, inserted] = token_id.emplace(merged, static_cast<int32_t>(model.tokens.size()));
    if (inserted) model.tokens.push_back(merged);
    const int32_t merged_id = it->second;
    for (Word& w : words) {
      size_t out = 0;
      for (size_t k = 0; k < w.size(); ++k) {
        if (k + 1 < w.size() && w[k] == best_left && w[k + 1] == best_right) {
          w[out++] = merged_id;
          ++k;
        } else {
          w[out++] = w[k];
        }
      }
      w.resize(out);
    }
  }
  return model;
}

}  // namespace tern::tools
