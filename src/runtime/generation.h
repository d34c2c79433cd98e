// One request's generation, token by token: the sampler, the stop conditions (end-of-generation
// tokens, stop strings, max tokens) and the streaming detokenizer. Fed the logits of the last
// consumed position, it picks the next token and returns the text that became visible.
// `tern run`, `tern chat` and the server's scheduler all generate through this one type.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/logprobs.h"
#include "runtime/sampler.h"
#include "text/detokenizer.h"
#include "text/stop_matcher.h"
#include "text/tokenizer.h"

namespace tern::runtime {

enum class FinishReason { kNone, kStop, kLength, kCancelled };
const char* finish_reason_name(FinishReason reason);  // OpenAI spelling: "stop", "length", ...

struct GenerationLimits {
  int64_t max_tokens = 256;
  std::vector<int32_t> stop_tokens;       // end-of-generation ids; never shown
  std::vector<std::string> stop_strings;  // output ends just before the first one
  int top_logprobs = -1;                  // -1: no logprobs; 0: the chosen token's only
  bool render_special = false;            // show CONTROL tokens in the text
};

struct GeneratedToken {
  int32_t token = 0;
  std::string text;  // newly visible text (complete UTF-8; may be empty)
  FinishReason finish = FinishReason::kNone;
  std::optional<Logprobs> logprobs;
};

class Generation {
 public:
  // `tokenizer` must outlive this; `banned` ids are never sampled (padding rows).
  Generation(const text::Tokenizer& tokenizer, SamplingParams params, GenerationLimits limits,
             std::span<const int32_t> prompt, std::span<const int32_t> banned = {});

  // Chooses the next token from the logits of the last position (modified in place).
  GeneratedToken next(std::span<float> logits);
  // Whether next() is the row's plain argmax, so that the engine's greedy pick (BatchItem::want_argmax)
  // can stand for the row: no logprobs wanted and Sampler::argmax_decides().
  bool argmax_decides() const;
  // next() on the row whose kernels::ref::argmax is `token`, with logit `logit`, without reading the
  // row, where that is sure to choose `token` (Sampler::chooses_argmax); nullopt, and nothing done, if not.
  std::optional<GeneratedToken> next_from_argmax(int32_t token, float logit);
  // next() on the engine's row of the last position, left as it is: its greedy pick `argmax`
  // (BatchItem::argmax, -1 if none) where that decides (next_from_argmax), else a copy of the row in
  // `scratch` (vocabulary-sized) through next().
  GeneratedToken next(std::span<const float> row, int32_t argmax, std::span<float> scratch);
  // Ends the generation early (client gone, deadline); returns text still held back.
  std::string cancel();

  bool finished() const { return finish_ != FinishReason::kNone; }
  FinishReason finish_reason() const { return finish_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  const GenerationLimits& limits() const { return limits_; }

 private:
  GeneratedToken emit(int32_t token);
  std::string release_held_text();
  bool is_stop_token(int32_t token) const;

  GenerationLimits limits_;
  Sampler sampler_;
  text::StreamingDetokenizer detokenizer_;
  text::StopMatcher stop_matcher_;
  std::vector<int32_t> tokens_;
  std::vector<float> raw_logits_;  // copy for logprobs, sized once
  FinishReason finish_ = FinishReason::kNone;
};

}  // namespace tern::runtime
