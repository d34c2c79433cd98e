#include "runtime/generation.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
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

// The engine's greedy pick (BatchItem::argmax) stands for the row: the same tokens, text and stops as
// next() on the row, and no stand-in where next() would need the row.
TEST(Generation, ArgmaxPickGivesWhatTheRowGives) {
  const auto tok = make_tokenizer();
  GenerationLimits limits;
  limits.stop_tokens = text::end_of_generation_ids(tok.vocab());
  limits.stop_strings = {"lo!"};
  const std::vector<int32_t> tokens{'h', 'e', 'l', 'l', 'o', '!', 'x'};
  Generation by_rows(tok, SamplingParams{}, limits, {});
  Generation by_picks(tok, SamplingParams{}, limits, {});
  for (int32_t t : tokens) {
    if (by_rows.finished()) break;
    auto logits = pick(t);
    const GeneratedToken want = by_rows.next(logits);
    const std::optional<GeneratedToken> got = by_picks.next_from_argmax(t, 10.0f);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->token, want.token);
    EXPECT_EQ(got->text, want.text);
    EXPECT_EQ(got->finish, want.finish);
  }
  EXPECT_TRUE(by_picks.finished());
  EXPECT_EQ(by_picks.tokens(), by_rows.tokens());

  GenerationLimits with_logprobs;
  with_logprobs.top_logprobs = 0;
  Generation wants_row(tok, SamplingParams{}, with_logprobs, {});
  EXPECT_FALSE(wants_row.argmax_decides());
  EXPECT_FALSE(wants_row.next_from_argmax('a', 10.0f).has_value());
  EXPECT_TRUE(wants_row.tokens().empty());  // nothing done
  SamplingParams penalised;
  penalised.frequency_penalty = 1.0f;
  Generation penalty(tok, penalised, GenerationLimits{}, {});
  EXPECT_FALSE(penalty.next_from_argmax('a', 10.0f).has_value());
  const std::vector<int32_t> banned{'a'};
  Generation banning(tok, SamplingParams{}, GenerationLimits{}, {}, banned);
  EXPECT_TRUE(banning.argmax_decides());
  EXPECT_FALSE(banning.next_from_argmax('a', 10.0f).has_value());
  EXPECT_EQ(banning.next_from_argmax('b', 10.0f)->token, 'b');
}

}  // namespace
}  // namespace tern::runtime
