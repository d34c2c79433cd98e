// Hand-made byte-level vocabularies for tests that need a Tokenizer without a model file.
#pragma once

#include <string>

#include "text/vocab.h"

namespace tern::text::testing {

// The GPT-2 byte-level text of one byte (model-spec §7.1).
inline std::string byte_char(int b) {
  auto printable = [](int k) { return (k >= '!' && k <= '~') || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE; };
  int cp = b;
  if (!printable(b)) {
    cp = 0x100;
    for (int k = 0; k < b; ++k) cp += !printable(k);
  }
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

// Ids 0..255 are the bytes, nothing else.
inline Vocab byte_vocab() {
  Vocab v;
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(byte_char(b));
    v.types.push_back(TokenType::kNormal);
  }
  return v;
}

}  // namespace tern::text::testing
