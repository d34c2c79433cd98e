// Streaming detokenizer (model-spec §7.1): turns ids into text as they arrive and never emits part of
// a UTF-8 sequence; bytes that can never become valid UTF-8 are emitted as U+FFFD.
#pragma once

#include <cstdint>
#include <string>

#include "text/tokenizer.h"

namespace tern::text {

class StreamingDetokenizer {
 public:
  // `tokenizer` must outlive this. CONTROL tokens are rendered as their text or hidden.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool render_special = false)
      : tokenizer_(tokenizer), render_special_(render_special) {}

  // The text that became complete with this token (often empty while a sequence is split across
  // tokens). Throws Error(kInput) for an id outside the vocabulary.
  std::string push(int32_t id);
  // Whatever is held back at the end of the stream, as U+FFFD for an incomplete sequence.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  std::string pending_;  // at most 3 bytes: the start of an incomplete sequence
};

}  // namespace tern::text
