#include "runtime/generation.h"

#include <algorithm>

#include "core/error.h"

namespace tern::runtime {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "none";
}

Generation::Generation(const text::Tokenizer& tokenizer, SamplingParams params, GenerationLimits limits,
                       std::span<const int32_t> prompt, std::span<const int32_t> banned)
    : limits_(std::move(limits)),
      sampler_(static_cast<int64_t>(tokenizer.size()), params, banned),
      detokenizer_(tokenizer, limits_.render_special),
      stop_matcher_(limits_.stop_strings) {
  if (limits_.max_tokens < 1)
    fail(ErrorKind::kInput, "max_tokens must be at least 1, got {}", limits_.max_tokens);
  sampler_.set_prompt(prompt);
  std::sort(limits_.stop_tokens.begin(), limits_.stop_tokens.end());
  tokens_.reserve(static_cast<size_t>(std::min<int64_t>(limits_.max_tokens, 1 << 16)));
  if (limits_.top_logprobs >= 0) raw_logits_.resize(tokenizer.size());
}

bool Generation::is_stop_token(int32_t token) const {
  return std::binary_search(limits_.stop_tokens.begin(), limits_.stop_tokens.end(), token);
}

GeneratedToken Generation::next(std::span<float> logits) {
  if (finished()) fail(ErrorKind::kInternal, "generation: next() after the generation finished");
  const bool want_logprobs = limits_.top_logprobs >= 0;
  if (want_logprobs) std::copy(logits.begin(), logits.end(), raw_logits_.begin());
  GeneratedToken out = emit(sampler_.sample(logits));
  if (want_logprobs) out.logprobs = compute_logprobs(raw_logits_, out.token, limits_.top_logprobs);
  return out;
}

bool Generation::argmax_decides() const {
  return limits_.top_logprobs < 0 && sampler_.argmax_decides();
}

std::optional<GeneratedToken> Generation::next_from_argmax(int32_t token, float logit) {
  if (finished()) fail(ErrorKind::kInternal, "generation: next() after the generation finished");
  if (limits_.top_logprobs >= 0 || !sampler_.chooses_argmax(token, logit)) return std::nullopt;
  return emit(token);
}

GeneratedToken Generation::next(std::span<const float> row, int32_t argmax, std::span<float> scratch) {
  if (argmax >= 0) {
    std::optional<GeneratedToken> picked = next_from_argmax(argmax, row[static_cast<size_t>(argmax)]);
    if (picked) return std::move(*picked);
  }
  std::copy(row.begin(), row.end(), scratch.begin());
  return next(scratch);
}

// Records the chosen token and applies the stop conditions.
GeneratedToken Generation::emit(int32_t token) {
  GeneratedToken out;
  out.token = token;
  sampler_.accept(out.token);
  tokens_.push_back(out.token);
  if (is_stop_token(out.token)) {
    finish_ = FinishReason::kStop;
    out.text = release_held_text();
  } else {
    auto visible = stop_matcher_.push(detokenizer_.push(out.token));
    out.text = std::move(visible.emit);
    if (visible.stopped) {
      finish_ = FinishReason::kStop;
    } else if (static_cast<int64_t>(tokens_.size()) >= limits_.max_tokens) {
      finish_ = FinishReason::kLength;
      out.text += release_held_text();
    }
  }
  out.finish = finish_;
  return out;
}

std::string Generation::cancel() {
  if (finished()) return {};
  finish_ = FinishReason::kCancelled;
  return release_held_text();
}

// At the end, bytes of an unfinished UTF-8 sequence and a possible stop-string prefix are real output.
std::string Generation::release_held_text() {
  std::string text = stop_matcher_.push(detokenizer_.flush()).emit;
  if (!stop_matcher_.stopped()) text += stop_matcher_.flush();
  return text;
}

}  // namespace tern::runtime
