// Splits streamed model output into reasoning (inside <think>…</think>) and the answer, as deltas
// arrive, so a terminal can show them apart. A tag split across deltas is held back until it is
// complete; text that might still become a tag is never shown early.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace tern::text {

class ThinkStream {
 public:
  // Receives settled text and whether it is reasoning.
  using Sink = std::function<void(std::string_view text, bool reasoning)>;

  // `in_reasoning`: the prompt already opened a think block (the generation prompt ends in <think>).
  explicit ThinkStream(bool in_reasoning) : in_reasoning_(in_reasoning) {}

  void feed(std::string_view delta, const Sink& sink);
  // Releases the held-back text at the end of the reply.
  void finish(const Sink& sink);

  const std::string& reasoning() const { return reasoning_; }
  const std::string& content() const { return content_; }

 private:
  void emit(std::string_view text, const Sink& sink);

  bool in_reasoning_;
  std::string pending_;
  std::string reasoning_;
  std::string content_;
};

// True if `prompt` ends inside an open think block (its last <think> has no </think> after it).
bool ends_in_think_block(std::string_view prompt);

}  // namespace tern::text
