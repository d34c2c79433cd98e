// The pre-tokenizer regexes of model-spec §7.2 (qwen35 and qwen2), matched by hand over code points in
// one left-to-right pass with the semantics HF tokenizers gives them (Oniguruma, leftmost alternative
// first, backtracking as the regex would): the \p{L} \p{M} \p{N} of HF's engine (its Unicode version),
// Unicode White_Space for \s, Unicode case folding for the contractions (model-spec §11.7). Linear time.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/vocab.h"

namespace tern::text {

// The regex as written in tokenizer.json (used to recognise it on import).
std::string_view pre_tokenizer_regex(PreTokenizer pre);

// Character classes the regexes use.
enum CharClass : uint8_t {
  kClassLetter = 1,   // \p{L}
  kClassMark = 2,     // \p{M}
  kClassNumber = 4,   // \p{N}
  kClassSpace = 8,    // \s: Unicode White_Space
  kClassNewline = 16  // [\r\n]
};
uint8_t char_class(char32_t cp);

// Splits valid UTF-8 `text` into pieces (views into text) appended to `pieces`; their concatenation is
// `text`.
void pre_tokenize(PreTokenizer pre, std::string_view text, std::vector<std::string_view>& pieces);

}  // namespace tern::text
