#include "runtime/generation.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "tests/text/test_vocab.h"
#include "text/stop_tokens.h"

namespace tern::runtime {
namespace {

// Bytes 0..255, then <|im_end|> (256, CONTROL, eos).
text::Tokenizer make_tokenizer() {
  text::Vocab vocab = text::testing::byte_vocab();
  vocab.tokens.push_back("<|im_end|>");
  vocab.types.push_back(text::TokenType::kControl);
  vocab.eos_id = 256;
  return text::Tokenizer(std::move(vocab));
}

// Logits that make `token` the greedy choice.
std::vector<float> pick(int32_t token, size_t vocab = 257) {
  std::vector<float> logits(vocab, 0.0f);
  logits[static_cast<size_t>(token)] = 10.0f;
  return logits;
}

std::string run(Generation& gen, const std::vector<int32_t>& tokens) {
  std::string out;
  for (int32_t t : tokens) {
    if (gen.finished()) break;
    auto logits = pick(t);
    out += gen.next(logits).text;
  }
  return out;
}

TEST(Generation, StopsOnEndOfGenerationTokenWithoutShowingIt) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.stop_tokens = text::end_of_generation_ids(tok.vocab());
  Generation gen(tok, {}, limits, {});
  EXPECT_EQ(run(gen, {'h', 'i', 256, 'x'}), "hi");
  EXPECT_EQ(gen.finish_reason(), FinishReason::kStop);
  EXPECT_EQ(gen.tokens().size(), 3u);
}

TEST(Generation, MaxTokensEndsWithLength) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.max_tokens = 2;
  Generation gen(tok, {}, limits, {});
  EXPECT_EQ(run(gen, {'a', 'b', 'c'}), "ab");
  EXPECT_EQ(gen.finish_reason(), FinishReason::kLength);
}

TEST(Generation, StopStringCutsTheText) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.stop_strings = {"\n\n"};
  Generation gen(tok, {}, limits, {});
  EXPECT_EQ(run(gen, {'o', 'k', '\n', '\n', 'z'}), "ok");
  EXPECT_EQ(gen.finish_reason(), FinishReason::kStop);
}

TEST(Generation, MultiByteCharacterAppearsWhole) {
  const auto tok = make_tokenizer();
  Generation gen(tok, {}, {}, {});
  // U+00E9 is C3 A9: nothing visible until the second byte.
  auto first = pick(0xC3);
  EXPECT_EQ(gen.next(first).text, "");
  auto second = pick(0xA9);
  EXPECT_EQ(gen.next(second).text, "\xC3\xA9");
}

TEST(Generation, HeldBackTextIsReleasedAtLength) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.max_tokens = 2;
  limits.stop_strings = {"END"};
  Generation gen(tok, {}, limits, {});
  EXPECT_EQ(run(gen, {'x', 'E'}), "xE");
}

TEST(Generation, CancelReleasesHeldText) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.stop_strings = {"END"};
  Generation gen(tok, {}, limits, {});
  EXPECT_EQ(run(gen, {'E', 'N'}), "");
  EXPECT_EQ(gen.cancel(), "EN");
  EXPECT_EQ(gen.finish_reason(), FinishReason::kCancelled);
}

TEST(Generation, LogprobsComeFromTheRawDistribution) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.top_logprobs = 2;
  SamplingParams params;
  params.presence_penalty = 100.0f;  // must not leak into the reported logprobs
  Generation gen(tok, params, limits, {});
  auto logits = pick('a');
  auto step = gen.next(logits);
  ASSERT_TRUE(step.logprobs.has_value());
  const double expected = 10.0 - std::log(256.0 + std::exp(10.0));
  EXPECT_NEAR(step.logprobs->chosen.logprob, expected, 1e-5);
  ASSERT_EQ(step.logprobs->top.size(), 2u);
  EXPECT_EQ(step.logprobs->top[0].token, 'a');
  EXPECT_EQ(step.logprobs->top[1].token, 0);  // ties: lowest id first
  auto again = pick('a');
  auto second = gen.next(again);  // the penalty now steers the choice away from 'a'...
  EXPECT_EQ(second.token, 0);
  EXPECT_NEAR(second.logprobs->chosen.logprob, expected - 10.0, 1e-5);
  EXPECT_EQ(second.logprobs->top[0].token, 'a');  // ...but the reported distribution is the model's
}

}  // namespace
}  // namespace tern::runtime
