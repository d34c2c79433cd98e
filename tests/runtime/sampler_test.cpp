#include "runtime/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "core/error.h"

namespace tern::runtime {
namespace {

TEST(Argmax, LowestIndexWinsTies) {
  std::vector<float> logits{1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(argmax(logits), 1);
}

TEST(Argmax, NanNeverWins) {
  std::vector<float> logits{std::nanf(""), 0.5f, std::nanf(""), 0.25f};
  EXPECT_EQ(argmax(logits), 1);
}

TEST(Sampler, GreedyIsArgmax) {
  Sampler sampler(5, SamplingParams{});
  std::vector<float> logits{0.1f, 0.7f, 0.7f, -1.0f, 0.2f};
  EXPECT_EQ(sampler.sample(logits), 1);
}

TEST(Sampler, BannedTokensAreNeverChosen) {
  std::vector<int32_t> banned{1};
  Sampler sampler(3, SamplingParams{}, banned);
  std::vector<float> logits{0.0f, 10.0f, 1.0f};
  EXPECT_EQ(sampler.sample(logits), 2);
}

// The engine's fused greedy pick may stand for the row only where sample() would return it.
TEST(Sampler, ArgmaxChoosesOnlyWhereSampleWould) {
  const std::vector<int32_t> banned{4, 1};
  const Sampler greedy(6, SamplingParams{}, banned);
  EXPECT_TRUE(greedy.argmax_decides());
  EXPECT_TRUE(greedy.chooses_argmax(2, 0.5f));
  EXPECT_TRUE(greedy.chooses_argmax(2, std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(greedy.chooses_argmax(1, 0.5f));  // banned: sample() takes the best allowed one
  EXPECT_FALSE(greedy.chooses_argmax(4, 0.5f));
  EXPECT_FALSE(greedy.chooses_argmax(2, -std::numeric_limits<float>::infinity()));  // ties the banned
  EXPECT_FALSE(greedy.chooses_argmax(2, std::nanf("")));
  EXPECT_FALSE(greedy.chooses_argmax(6, 0.5f));

  std::vector<float> logits{0.0f, 9.0f, 3.0f, 3.0f, 9.5f, -1.0f};  // argmax 4 is banned
  Sampler copy(6, SamplingParams{}, banned);
  EXPECT_EQ(copy.sample(logits), 2);

  const auto decides = [](auto&& set) {
    SamplingParams params;
    set(params);
    return Sampler(6, params).argmax_decides();
  };
  EXPECT_FALSE(decides([](SamplingParams& p) { p.temperature = 0.7f; }));
  EXPECT_FALSE(decides([](SamplingParams& p) { p.logit_bias = {{3, 1.0f}}; }));
  EXPECT_FALSE(decides([](SamplingParams& p) { p.repetition_penalty = 1.1f; }));
  EXPECT_FALSE(decides([](SamplingParams& p) { p.presence_penalty = 0.5f; }));
  EXPECT_FALSE(decides([](SamplingParams& p) { p.frequency_penalty = 0.5f; }));
  EXPECT_TRUE(decides([](SamplingParams& p) { p.top_k = 5; }));  // greedy ignores the cut-offs
}

TEST(Sampler, LogitBiasShiftsRawLogitsAndIsRangeChecked) {
  SamplingParams params;
  params.logit_bias = {{3, 2.0f}, {1, -100.0f}};
  Sampler sampler(5, params);
  std::vector<float> logits{0.1f, 5.0f, 0.7f, -1.0f, 0.2f};
  EXPECT_EQ(sampler.sample(logits), 3);  // 1 falls to −95, 3 rises from −1 to 1 past 0.7
  EXPECT_FLOAT_EQ(logits[3], 1.0f);
  EXPECT_FLOAT_EQ(logits[1], -95.0f);
  params.logit_bias = {{5, 1.0f}};
  EXPECT_THROW(Sampler(5, params), Error);
}

TEST(Sampler, SameSeedSameDraws) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 42;
  Sampler a(8, params), b(8, params);
  for (int step = 0; step < 50; ++step) {
    std::vector<float> la{0, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f};
    std::vector<float> lb = la;
    EXPECT_EQ(a.sample(la), b.sample(lb));
  }
}

TEST(Sampler, TopKOneIsGreedy) {
  SamplingParams params;
  params.temperature = 5.0f;
  params.top_k = 1;
  params.seed = 7;
  Sampler sampler(4, params);
  for (int step = 0; step < 20; ++step) {
    std::vector<float> logits{0.0f, 0.5f, 0.49f, 0.1f};
    EXPECT_EQ(sampler.sample(logits), 1);
  }
}

TEST(Sampler, TopPKeepsOnlyTheNucleus) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.top_p = 0.5f;
  params.seed = 3;
  Sampler sampler(3, params);
  // Probabilities ~ {0.84, 0.11, 0.04}: the first token alone reaches 0.5.
  for (int step = 0; step < 50; ++step) {
    std::vector<float> logits{3.0f, 1.0f, 0.0f};
    EXPECT_EQ(sampler.sample(logits), 0);
  }
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.min_p = 0.2f;
  params.seed = 11;
  Sampler sampler(3, params);
  // p ~ {0.49, 0.49, 0.02}: token 2 is below 0.2 * 0.49.
  std::map<int32_t, int> counts;
  for (int step = 0; step < 200; ++step) {
    std::vector<float> logits{3.0f, 3.0f, 0.0f};
    ++counts[sampler.sample(logits)];
  }
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[0], 0);
  EXPECT_GT(counts[1], 0);
}

TEST(Sampler, SamplingFollowsTheDistribution) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 5;
  Sampler sampler(2, params);
  int ones = 0;
  const int n = 4000;
  for (int step = 0; step < n; ++step) {
    std::vector<float> logits{0.0f, std::log(3.0f)};  // p(1) = 0.75
    ones += sampler.sample(logits) == 1;
  }
  EXPECT_NEAR(static_cast<double>(ones) / n, 0.75, 0.03);
}

TEST(Sampler, PresenceAndFrequencyPenaltiesUseOutputCounts) {
  SamplingParams params;
  params.presence_penalty = 1.0f;
  params.frequency_penalty = 0.5f;
  Sampler sampler(3, params);
  sampler.accept(0);
  sampler.accept(0);
  std::vector<float> logits{2.5f, 0.0f, 0.4f};
  // token 0: 2.5 - 1.0 - 0.5 * 2 = 0.5 > 0.4
  EXPECT_EQ(sampler.sample(logits), 0);
  EXPECT_FLOAT_EQ(logits[0], 0.5f);
  sampler.accept(0);
  std::vector<float> again{2.5f, 0.0f, 0.4f};
  EXPECT_EQ(sampler.sample(again), 2);  // 2.5 - 1.0 - 1.5 = 0.0
}

TEST(Sampler, RepetitionPenaltyScalesByLogitSign) {
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  Sampler sampler(3, params);
  std::vector<int32_t> prompt{0, 1};
  sampler.set_prompt(prompt);
  std::vector<float> logits{4.0f, -1.0f, 2.5f};
  EXPECT_EQ(sampler.sample(logits), 2);
  EXPECT_FLOAT_EQ(logits[0], 2.0f);
  EXPECT_FLOAT_EQ(logits[1], -2.0f);
  sampler.reset();
  std::vector<float> fresh{4.0f, -1.0f, 2.5f};
  EXPECT_EQ(sampler.sample(fresh), 0);
}

TEST(Sampler, RejectsImpossibleParameters) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto rejected = [](void (*set)(SamplingParams&, float), float value) {
    SamplingParams params;
    set(params, value);
    try {
      Sampler sampler(4, params);
    } catch (const Error& e) {
      return e.kind() == ErrorKind::kInput;
    }
    return false;
  };
  const auto temperature = [](SamplingParams& p, float v) { p.temperature = v; };
  const auto top_p = [](SamplingParams& p, float v) { p.top_p = v; };
  const auto min_p = [](SamplingParams& p, float v) { p.min_p = v; };
  const auto repetition = [](SamplingParams& p, float v) { p.repetition_penalty = v; };
  const auto presence = [](SamplingParams& p, float v) { p.presence_penalty = v; };
  const auto frequency = [](SamplingParams& p, float v) { p.frequency_penalty = v; };
  for (const float v : {nan, inf, -inf}) {
    EXPECT_TRUE(rejected(temperature, v)) << v;
    EXPECT_TRUE(rejected(presence, v)) << v;
    EXPECT_TRUE(rejected(frequency, v)) << v;
    EXPECT_TRUE(rejected(repetition, v)) << v;
  }
  for (const float v : {0.0f, -0.5f, 1.5f, nan}) EXPECT_TRUE(rejected(top_p, v)) << v;
  for (const float v : {-0.1f, 1.5f, nan}) EXPECT_TRUE(rejected(min_p, v)) << v;
  EXPECT_TRUE(rejected(repetition, 0.0f));
  // The documented conventions stay: a negative temperature is greedy, top_p 1 and min_p 0 are off.
  EXPECT_FALSE(rejected(temperature, -1.0f));
  EXPECT_FALSE(rejected(top_p, 1.0f));
  EXPECT_FALSE(rejected(min_p, 0.0f));
  EXPECT_FALSE(rejected(presence, -2.0f));
  EXPECT_THROW(Sampler(0, SamplingParams{}), Error);
}

}  // namespace
}  // namespace tern::runtime
