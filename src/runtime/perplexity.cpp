#include "runtime/perplexity.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace tern::runtime {

EngineLogitsSource::EngineLogitsSource(Engine& engine, int64_t ctx)
    : engine_(engine), state_(engine.new_sequence(ctx)) {}

int64_t EngineLogitsSource::vocab_size() const {
  return engine_.model().config().vocab_size;
}

int64_t EngineLogitsSource::max_tokens() const {
  return engine_.limits().max_tokens;
}

int64_t EngineLogitsSource::max_scored_rows() const {
  return engine_.limits().max_logit_rows;
}

void EngineLogitsSource::start_window() {
  state_.reset();
}

std::span<const float> EngineLogitsSource::feed(std::span<const int32_t> tokens, bool want_rows) {
  BatchItem item{&state_, tokens, want_rows ? LogitsWanted::kAll : LogitsWanted::kNone};
  engine_.step({&item, 1});
  return item.logits;
}

void NllAccumulator::add(double nll) {
  sum_ += nll;
  sum_squares_ += nll * nll;
  ++count_;
}

double NllAccumulator::mean() const {
  return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_);
}

double NllAccumulator::perplexity() const {
  return std::exp(mean());
}

double NllAccumulator::perplexity_error() const {
  if (count_ < 2) return 0.0;
  const double n = static_cast<double>(count_);
  const double variance = std::max(sum_squares_ / n - mean() * mean(), 0.0);
  return perplexity() * std::sqrt(variance / (n - 1.0));
}

double token_nll(std::span<const float> logits, int32_t target) {
  if (target < 0 || static_cast<size_t>(target) >= logits.size()) {
    fail(ErrorKind::kInput, "token {} is outside the vocabulary of {}", target, logits.size());
  }
  double max_logit = logits[0];
  for (const float value : logits) max_logit = std::max(max_logit, static_cast<double>(value));
  double sum = 0.0;
  for (const float value : logits) sum += std::exp(static_cast<double>(value) - max_logit);
  return std::log(sum) + max_logit - static_cast<double>(logits[static_cast<size_t>(target)]);
}

int64_t first_scored_offset(int64_t ctx, int64_t stride) {
  return std::max(ctx / 2 + 1, ctx - stride);
}

NllAccumulator perplexity(LogitsSource& source, std::span<const int32_t> tokens, int64_t ctx, int64_t stride,
                          const std::function<void(const PerplexityProgress&)>& on_window) {
  if (ctx < 4) fail(ErrorKind::kInput, "perplexity: the window must be at least 4 tokens, got {}", ctx);
  if (stride < 1) fail(ErrorKind::kInput, "perplexity: the stride must be at least 1, got {}", stride);
  const auto total = static_cast<int64_t>(tokens.size());
  if (total < ctx)
    fail(ErrorKind::kInput, "perplexity: {} tokens are fewer than one window of {}", total, ctx);
  const int64_t windows = (total - ctx) / stride + 1;
  const int64_t first = first_scored_offset(ctx, stride);
  const auto vocab = static_cast<size_t>(source.vocab_size());
  NllAccumulator totals;

  for (int64_t w = 0; w < windows; ++w) {
    const std::span<const int32_t> window =
        tokens.subspan(static_cast<size_t>(w * stride), static_cast<size_t>(ctx));
    source.start_window();
    // The logits after w[0..j) are the row of position j − 1; the scored rows are first−1 .. ctx−2.
    // The last token predicts nothing inside the window and is not fed. The unscored head of the window
    // goes in the longest feeds; the scored rows in feeds the source can hold rows for.
    for (int64_t begin = 0; begin < ctx - 1;) {
      const bool scored = begin >= first - 1;
      const int64_t end = scored ? std::min(begin + source.max_scored_rows(), ctx - 1)
                                 : std::min(begin + source.max_tokens(), first - 1);
      const std::span<const float> rows =
          source.feed(window.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)), scored);
      for (int64_t position = begin; scored && position < end; ++position) {
        const auto row = rows.subspan(static_cast<size_t>(position - begin) * vocab, vocab);
        totals.add(token_nll(row, window[static_cast<size_t>(position + 1)]));
      }
      begin = end;
    }
    if (on_window) on_window({w + 1, windows, &totals});
  }
  return totals;
}

}  // namespace tern::runtime
