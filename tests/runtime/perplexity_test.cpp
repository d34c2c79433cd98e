#include "runtime/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"

namespace tern::runtime {
namespace {

// Logits that put probability p on token (previous + 1) mod vocab and spread the rest evenly; every
// call is recorded so the test can see what was fed.
class FakeSource final : public LogitsSource {
 public:
  FakeSource(int64_t vocab, int64_t chunk, float boost, int64_t scored_chunk = 0)
      : vocab_(vocab), chunk_(chunk), scored_chunk_(scored_chunk > 0 ? scored_chunk : chunk), boost_(boost) {}
  int64_t vocab_size() const override { return vocab_; }
  int64_t max_tokens() const override { return chunk_; }
  int64_t max_scored_rows() const override { return scored_chunk_; }
  void start_window() override { ++windows_started; }
  std::span<const float> feed(std::span<const int32_t> tokens, bool want_rows) override {
    EXPECT_LE(static_cast<int64_t>(tokens.size()), want_rows ? scored_chunk_ : chunk_);
    fed_tokens += static_cast<int64_t>(tokens.size());
    feeds.push_back({static_cast<int64_t>(tokens.size()), want_rows});
    if (!want_rows) return {};
    rows_.assign(tokens.size() * static_cast<size_t>(vocab_), 0.0f);
    for (size_t i = 0; i < tokens.size(); ++i) {
      rows_[i * static_cast<size_t>(vocab_) + static_cast<size_t>((tokens[i] + 1) % vocab_)] = boost_;
    }
    return rows_;
  }
  struct Feed {
    int64_t tokens;
    bool rows;
    bool operator==(const Feed&) const = default;
  };
  int windows_started = 0;
  int64_t fed_tokens = 0;
  std::vector<Feed> feeds;

 private:
  int64_t vocab_;
  int64_t chunk_;
  int64_t scored_chunk_;
  float boost_;
  std::vector<float> rows_;
};

TEST(Perplexity, UniformLogitsGiveTheVocabularySize) {
  FakeSource source(/*vocab=*/37, /*chunk=*/5, /*boost=*/0.0f);
  std::vector<int32_t> tokens(100);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7) % 37);
  const NllAccumulator result = perplexity(source, tokens, /*ctx=*/16, /*stride=*/16);
  EXPECT_NEAR(result.perplexity(), 37.0, 1e-9);
  EXPECT_NEAR(result.perplexity_error(), 0.0, 1e-9);
  // 6 disjoint windows of 16; each scores targets 9..15 (7 tokens) and feeds 15 tokens.
  EXPECT_EQ(source.windows_started, 6);
  EXPECT_EQ(result.count(), 6 * 7);
  EXPECT_EQ(source.fed_tokens, 6 * 15);
}

TEST(Perplexity, ScoresTheSecondHalfOfEachWindowWithDeltaMethodError) {
  // Boosted token b gets probability e^b / (e^b + V − 1). Tokens follow +1 except at multiples of 10,
  // where the target is a different (unboosted) token.
  const int64_t vocab = 11;
  const float boost = 3.0f;
  FakeSource source(vocab, /*chunk=*/4, boost);
  std::vector<int32_t> tokens(40);
  for (size_t i = 1; i < tokens.size(); ++i) {
    tokens[i] = static_cast<int32_t>((tokens[i - 1] + (i % 10 == 0 ? 2 : 1)) % vocab);
  }
  const int64_t ctx = 10;
  const int64_t stride = 3;  // overlapping windows: each scores its last 3 targets (ctx − stride = 7)
  ASSERT_EQ(first_scored_offset(ctx, stride), 7);
  std::vector<double> nlls;
  const double denominator = std::exp(double{boost}) + static_cast<double>(vocab - 1);
  for (int64_t start = 0; start + ctx <= 40; start += stride) {
    for (int64_t j = 7; j < ctx; ++j) {
      const bool follows = (start + j) % 10 != 0;
      nlls.push_back(std::log(denominator) - (follows ? boost : 0.0));
    }
  }
  int progress_calls = 0;
  const NllAccumulator result = perplexity(source, tokens, ctx, stride, [&](const PerplexityProgress& p) {
    ++progress_calls;
    EXPECT_EQ(p.window, progress_calls);
    EXPECT_EQ(p.windows, 11);
  });
  EXPECT_EQ(progress_calls, 11);
  ASSERT_EQ(result.count(), static_cast<int64_t>(nlls.size()));
  const double n = static_cast<double>(nlls.size());
  const double mean = std::accumulate(nlls.begin(), nlls.end(), 0.0) / n;
  double squares = 0.0;
  for (const double v : nlls) squares += (v - mean) * (v - mean);
  const double standard_error = std::sqrt(squares / n / (n - 1.0));
  EXPECT_NEAR(result.perplexity(), std::exp(mean), 1e-9);
  EXPECT_NEAR(result.perplexity_error(), std::exp(mean) * standard_error, 1e-9);
  EXPECT_GT(result.perplexity_error(), 0.0);
}

// A row is a whole vocabulary, so the scored rows go in feeds of at most max_scored_rows while the
// unscored head of each window goes in the longest feeds, and asks for no rows.
TEST(Perplexity, ScoredRowsComeInFeedsTheSourceCanHold) {
  FakeSource source(/*vocab=*/13, /*chunk=*/8, /*boost=*/2.0f, /*scored_chunk=*/3);
  std::vector<int32_t> tokens(20);
  for (size_t i = 1; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((tokens[i - 1] + 1) % 13);
  // One window of 20: positions 0..9 unscored (first scored target 11), rows 10..18 scored.
  const NllAccumulator result = perplexity(source, tokens, /*ctx=*/20, /*stride=*/20);
  ASSERT_EQ(first_scored_offset(20, 20), 11);
  const std::vector<FakeSource::Feed> expected = {{8, false}, {2, false}, {3, true}, {3, true}, {3, true}};
  EXPECT_EQ(source.feeds, expected);
  EXPECT_EQ(result.count(), 9);
  const double nll = std::log(std::exp(2.0) + 12.0) - 2.0;  // every target follows +1: boosted
  EXPECT_NEAR(result.mean(), nll, 1e-9);
}

TEST(Perplexity, TokenNllIsStableForLargeLogits) {
  const std::vector<float> logits = {1000.0f, 1000.0f, -1000.0f};
  EXPECT_NEAR(token_nll(logits, 0), std::log(2.0), 1e-12);
  EXPECT_THROW(token_nll(logits, 3), Error);
}

TEST(Perplexity, RejectsTooFewTokensAndBadWindows) {
  FakeSource source(5, 4, 0.0f);
  const std::vector<int32_t> tokens(8, 1);
  EXPECT_THROW(perplexity(source, tokens, 16, 16), Error);
  EXPECT_THROW(perplexity(source, tokens, 2, 2), Error);
  EXPECT_THROW(perplexity(source, tokens, 8, 0), Error);
}

}  // namespace
}  // namespace tern::runtime
