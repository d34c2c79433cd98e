// A small deterministic byte-level BPE trainer (GPT-2 byte alphabet, model-spec §7.1), used by
// `tern synth` to give its models a real tokenizer. It is not the runtime tokenizer (text/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern::tools {

// The GPT-2 byte → symbol map as UTF-8: printable bytes stand for themselves, the others for
// U+0100 onwards in byte order (space → "Ġ", newline → "Ċ").
std::string byte_symbol(uint8_t byte);

// An approximation of the qwen35 pre-tokenizer split (§7.2) over bytes: contractions, an optional
// non-letter prefix on letter runs, single digits, punctuation runs with trailing newlines, and
// whitespace that leaves its last character to the next piece. Bytes >= 0x80 count as letters.
std::vector<std::string_view> pre_split(std::string_view text);

struct BpeModel {
  std::vector<std::string> tokens;  // 256 byte symbols (in byte order), then each new merge result
  std::vector<std::pair<std::string, std::string>> merges;  // rank = index
};

// Merges the most frequent adjacent pair (ties: the lexicographically smallest pair) until no
// pair occurs twice or the vocabulary holds `max_tokens` tokens.
BpeModel train_bpe(std::string_view corpus, size_t max_tokens);

}  // namespace tern::tools
