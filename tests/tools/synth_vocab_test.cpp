#include "tools/synth_vocab.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

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
  EXPECT_EQ(model.merges[0], "a b");  // "ab" occurs 3 times, "cd" twice
  EXPECT_EQ(model.tokens[256], "ab");
  const BpeModel capped = train_bpe("ab ab ab cd cd", 257);
  EXPECT_EQ(capped.tokens.size(), 257u);
}

TEST(SynthVocab, BuiltinTokenizerIsSelfConsistentAndPadded) {
  const SynthVocab vocab = builtin_vocab(1024);
  ASSERT_EQ(vocab.tokens.size(), 1024u);
  ASSERT_EQ(vocab.token_types.size(), 1024u);
  EXPECT_GT(vocab.merges.size(), 300u);
  const std::set<std::string> tokens(vocab.tokens.begin(), vocab.tokens.end());
  EXPECT_EQ(tokens.size(), vocab.tokens.size()) << "duplicate tokens";
  for (const std::string& merge : vocab.merges) {
    const size_t space = merge.find(' ');
    ASSERT_NE(space, std::string::npos) << merge;
    const std::string left = merge.substr(0, space);
    const std::string right = merge.substr(space + 1);
    EXPECT_TRUE(tokens.contains(left)) << merge;
    EXPECT_TRUE(tokens.contains(right)) << merge;
    EXPECT_TRUE(tokens.contains(left + right)) << merge;
  }
  EXPECT_EQ(vocab.tokens[vocab.eos_id], "<|im_end|>");
  EXPECT_EQ(vocab.tokens[vocab.pad_id], "<|endoftext|>");
  EXPECT_EQ(vocab.pad_id + 2, vocab.eos_id);  // <|endoftext|>, <|im_start|>, <|im_end|> as in §7.3
  const auto type_of = [&](std::string_view token) {
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
      if (vocab.tokens[i] == token) return static_cast<TokenType>(vocab.token_types[i]);
    }
    return TokenType::kNormal;
  };
  EXPECT_EQ(type_of("<|im_start|>"), TokenType::kControl);
  EXPECT_EQ(type_of("<|fim_prefix|>"), TokenType::kControl);
  EXPECT_EQ(type_of("<think>"), TokenType::kUserDefined);
  EXPECT_EQ(type_of("</tool_call>"), TokenType::kUserDefined);
  EXPECT_EQ(vocab.tokens.back(), "[PAD1023]");
  EXPECT_EQ(static_cast<TokenType>(vocab.token_types.back()), TokenType::kUnused);
  EXPECT_EQ(qwen_special_tokens().size(), 33u);  // ids 248044..248076
  EXPECT_NE(vocab.chat_template.find("<think>\\n"), std::string::npos);
}

}  // namespace
}  // namespace tern::tools
