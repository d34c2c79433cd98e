// Perplexity of a token stream, scored the way llama-perplexity does: the tokens are cut into windows
// of `ctx` tokens starting every `stride` tokens (default: stride = ctx, disjoint windows); each window
// runs from an empty state, and only its later tokens are scored, so every scored token sees at least
// ctx/2 tokens of context. Exactly: in a window w[0..ctx), the scored targets are w[j] for
// j in [max(ctx/2 + 1, ctx − stride), ctx), each with NLL = −log softmax(logits after w[0..j))[w[j]]
// (natural log, in double). A tail shorter than a whole window is not scored.
// PPL = exp(mean NLL); its standard error by the delta method is PPL · SE(mean NLL), with
// SE = sqrt((mean(NLL²) − mean(NLL)²) / (N − 1)).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "runtime/engine.h"

namespace tern::runtime {

// Where the logits come from: an engine, or a fake in tests.
class LogitsSource {
 public:
  virtual ~LogitsSource() = default;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t max_tokens() const = 0;       // most tokens per feed
  virtual int64_t max_scored_rows() const = 0;  // most tokens per feed that wants rows
  virtual void start_window() = 0;              // an empty sequence
  // Feeds `tokens` after those already fed; if `want_rows`, returns [tokens][vocab] logits (valid
  // until the next call), else an empty span.
  virtual std::span<const float> feed(std::span<const int32_t> tokens, bool want_rows) = 0;
};

class EngineLogitsSource final : public LogitsSource {
 public:
  EngineLogitsSource(Engine& engine, int64_t ctx);
  int64_t vocab_size() const override;
  int64_t max_tokens() const override;
  int64_t max_scored_rows() const override;
  void start_window() override;
  std::span<const float> feed(std::span<const int32_t> tokens, bool want_rows) override;

 private:
  Engine& engine_;
  SequenceState state_;
};

// Running mean of NLLs and the derived perplexity.
class NllAccumulator {
 public:
  void add(double nll);
  int64_t count() const { return count_; }
  double mean() const;
  double perplexity() const;
  double perplexity_error() const;  // 0 with fewer than two values

 private:
  double sum_ = 0.0;
  double sum_squares_ = 0.0;
  int64_t count_ = 0;
};

// −log softmax(logits)[target], computed in double.
double token_nll(std::span<const float> logits, int32_t target);

struct PerplexityProgress {
  int64_t window = 0;  // 1-based
  int64_t windows = 0;
  const NllAccumulator* totals = nullptr;
};

// Throws Error(kInput) for ctx < 4, stride < 1, or fewer than ctx tokens.
NllAccumulator perplexity(LogitsSource& source, std::span<const int32_t> tokens, int64_t ctx, int64_t stride,
                          const std::function<void(const PerplexityProgress&)>& on_window = {});

// The first scored offset of a window (see above).
int64_t first_scored_offset(int64_t ctx, int64_t stride);

}  // namespace tern::runtime
