#include "tools/synth_vocab.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "text/chat_template.h"
#include "text/tokenizer.h"
#include "tools/bpe_trainer.h"

namespace tern::tools {
namespace {

TEST(BpeTrainer, ByteSymbolsFollowTheGpt2Alphabet) {
  EXPECT_EQ(byte_symbol('a'), "a");
  EXPECT_EQ(byte_symbol('!'), "!");
  EXPECT_EQ(byte_symbol(' '), "\xc4\xa0");   // Ġ, U+0120
  EXPECT_EQ(byte_symbol('\n'), "\xc4\x8a");  // Ċ, U+010A
  EXPECT_EQ(byte_symbol(0), "\xc4\x80");     // U+0100
  EXPECT_EQ(byte_symbol(0xad), "\xc5\x83");  // the last non-printable byte, U+0143
  std::set<std::string> all;
  for (int b = 0; b < 256; ++b) all.insert(byte_symbol(static_cast<uint8_t>(b)));
  EXPECT_EQ(all.size(), 256u);
}

TEST(BpeTrainer, PreSplitKeepsSpacesOnWordsAndSplitsDigits) {
  const std::vector<std::string_view> pieces = pre_split("Hello world's 123!!\n\n  x");
  const std::vector<std::string_view> expected = {"Hello", " world", "'s",     " ", "1",
                                                  "2",     "3",      "!!\n\n", " ", " x"};
  EXPECT_EQ(pieces, expected);
}

TEST(BpeTrainer, MergesTheMostFrequentPairFirst) {
  const BpeModel model = train_bpe("ab ab ab cd cd", 1000);
  ASSERT_GE(model.merges.size(), 2u);
  EXPECT_EQ(model.merges[0], (std::pair<std::string, std::string>{"a", "b"}));  // "ab" 3 times, "cd" twice
  EXPECT_EQ(model.tokens[256], "ab");
  const BpeModel capped = train_bpe("ab ab ab cd cd", 257);
  EXPECT_EQ(capped.tokens.size(), 257u);
}

TEST(SynthVocab, BuiltinTokenizerIsSelfConsistentAndPadded) {
  const text::Vocab vocab = builtin_vocab(1024);
  ASSERT_EQ(vocab.tokens.size(), 1024u);
  ASSERT_EQ(vocab.types.size(), 1024u);
  EXPECT_GT(vocab.merges.size(), 300u);
  const std::set<std::string> tokens(vocab.tokens.begin(), vocab.tokens.end());
  EXPECT_EQ(tokens.size(), vocab.tokens.size()) << "duplicate tokens";
  for (const auto& [left, right] : vocab.merges) {
    EXPECT_TRUE(tokens.contains(left)) << left << " " << right;
    EXPECT_TRUE(tokens.contains(right)) << left << " " << right;
    EXPECT_TRUE(tokens.contains(left + right)) << left << " " << right;
    EXPECT_EQ(left.find(' '), std::string::npos);
  }
  ASSERT_TRUE(vocab.eos_id && vocab.pad_id);
  EXPECT_EQ(vocab.tokens[*vocab.eos_id], "<|im_end|>");
  EXPECT_EQ(vocab.tokens[*vocab.pad_id], "<|endoftext|>");
  EXPECT_EQ(*vocab.pad_id + 2, *vocab.eos_id);  // <|endoftext|>, <|im_start|>, <|im_end|> as in §7.3
  EXPECT_FALSE(vocab.bos_id.has_value());
  EXPECT_FALSE(vocab.add_bos);
  const auto type_of = [&](std::string_view token) {
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
      if (vocab.tokens[i] == token) return vocab.types[i];
    }
    return text::TokenType::kNormal;
  };
  EXPECT_EQ(type_of("<|im_start|>"), text::TokenType::kControl);
  EXPECT_EQ(type_of("<|fim_prefix|>"), text::TokenType::kControl);
  EXPECT_EQ(type_of("<think>"), text::TokenType::kUserDefined);
  EXPECT_EQ(type_of("</tool_call>"), text::TokenType::kUserDefined);
  EXPECT_EQ(vocab.tokens.back(), "[PAD1023]");
  EXPECT_EQ(vocab.types.back(), text::TokenType::kUnused);
  EXPECT_EQ(qwen_special_tokens().size(), 33u);  // ids 248044..248076
  EXPECT_NE(vocab.chat_template.find("<think>\\n"), std::string::npos);
}

TEST(SynthVocab, BuiltinTokenizerRoundTripsAndCompressesItsCorpus) {
  const text::Tokenizer tokenizer(builtin_vocab(1024));  // checks merges, bytes and types
  const std::string_view corpus = builtin_corpus();
  const std::vector<int32_t> ids = tokenizer.encode(corpus);
  EXPECT_EQ(tokenizer.decode(ids), corpus);
  EXPECT_LT(ids.size() * 2, corpus.size()) << "merges should at least halve the byte count";
  const std::vector<int32_t> turn = tokenizer.encode("<|im_start|>user\nThe weather<|im_end|>");
  ASSERT_GE(turn.size(), 3u);
  EXPECT_EQ(tokenizer.token_type(turn.front()), text::TokenType::kControl);
  EXPECT_EQ(tokenizer.token_bytes(turn.back()), "<|im_end|>");
}

TEST(SynthVocab, ChatTemplateRendersTheQwenTurnShapes) {
  const text::ChatTemplate chat(builtin_chat_template());
  const auto request = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": " Be brief. "},
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": "<think>\nneed a tool\n</think>\n\nChecking.",
       "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}}]},
      {"role": "tool", "content": "18 C"},
      {"role": "tool", "content": "sunny"},
      {"role": "assistant", "content": "It is 18 C and sunny.", "reasoning_content": "summarise"},
      {"role": "user", "content": "Thanks"}],
    "tools": [{"type": "function", "function": {"name": "get_weather"}}]})");
  const std::string prompt = chat.render(request);
  EXPECT_TRUE(prompt.starts_with(
      "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n{"));
  EXPECT_NE(
      prompt.find("</IMPORTANT>\n\nBe brief.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n"),
      std::string::npos);
  // Before the last user query: reasoning dropped, tool call in XML, tool results in one user turn.
  EXPECT_NE(
      prompt.find("<|im_start|>assistant\nChecking.\n\n<tool_call>\n<function=get_weather>\n"
                  "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n[1, 2]\n</parameter>\n"
                  "</function>\n</tool_call><|im_end|>\n"
                  "<|im_start|>user\n<tool_response>\n18 C\n</tool_response>\n<tool_response>\nsunny\n"
                  "</tool_response><|im_end|>\n<|im_start|>assistant\nIt is 18 C and sunny.<|im_end|>\n"),
      std::string::npos)
      << prompt;
  EXPECT_TRUE(prompt.ends_with("<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n<think>\n"));

  const auto no_think = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "<think>r</think>Hello"}],
    "add_generation_prompt": false})");
  EXPECT_EQ(
      chat.render(no_think),
      "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\nHello<|im_end|>\n");
  const auto thinking_off = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "user", "content": "Hi"}], "chat_template_kwargs": {"enable_thinking": false}})");
  EXPECT_EQ(chat.render(thinking_off),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

}  // namespace
}  // namespace tern::tools
