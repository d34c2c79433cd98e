// The hand-written pre-tokenizer against splits HF tokenizers produced for the same regexes, and its
// character classes against the code points HF's regex engine puts in each class.
#include "text/pretokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/text/tokenizer_fixtures.h"

namespace tern::text {
namespace {

std::vector<std::string> split(PreTokenizer pre, std::string_view text) {
  std::vector<std::string_view> pieces;
  pre_tokenize(pre, text, pieces);
  return {pieces.begin(), pieces.end()};
}

using Pieces = std::vector<std::string>;

// Expected pieces were printed by HF tokenizers' Split(Regex(pattern), "isolated").
TEST(PreTokenizer, Qwen35SplitsLikeHf) {
  const auto q = PreTokenizer::kQwen35;
  EXPECT_EQ(split(q, "Hello world's END'S it'\u017f 'LL"),
            (Pieces{"Hello", " world", "'s", " END", "'S", " it", "'\u017f", " '", "LL"}));
  EXPECT_EQ(split(q, "a  b   c\n\n  d"), (Pieces{"a", " ", " b", "  ", " c", "\n\n", " ", " d"}));
  EXPECT_EQ(split(q, "x \n y"), (Pieces{"x", " \n", " y"}));
  EXPECT_EQ(split(q, "  \t\n"), (Pieces{"  \t\n"}));
  EXPECT_EQ(split(q, "trailing  "), (Pieces{"trailing", "  "}));
  EXPECT_EQ(split(q, "e\u0301t\u00e9 \u0301x"), (Pieces{"e\u0301t\u00e9", " \u0301x"}));
  EXPECT_EQ(split(q, "!!!\n\nabc"), (Pieces{"!!!\n\n", "abc"}));
  EXPECT_EQ(split(q, "12345 ab12"), (Pieces{"1", "2", "3", "4", "5", " ab", "1", "2"}));
  EXPECT_EQ(split(q, " ?!x"), (Pieces{" ?!", "x"}));
  EXPECT_EQ(split(q, "\u0915\u093f\u0928 \u0e2a\u0e27\u0e31"),
            (Pieces{"\u0915\u093f\u0928", " \u0e2a\u0e27\u0e31"}));
  EXPECT_EQ(split(q, "\r\n\r\n  x"), (Pieces{"\r\n\r\n", " ", " x"}));
  EXPECT_EQ(split(q, "'re'VE'x"), (Pieces{"'re", "'VE", "'x"}));
  EXPECT_EQ(split(q, "a\u00a0\u00a0b"), (Pieces{"a", "\u00a0", "\u00a0b"}));
  EXPECT_EQ(split(q, ""), Pieces{});
}

TEST(PreTokenizer, Qwen2KeepsMarksOutOfWords) {
  const auto q = PreTokenizer::kQwen2;
  EXPECT_EQ(split(q, "e\u0301t\u00e9 \u0301x"), (Pieces{"e", "\u0301t\u00e9", " \u0301", "x"}));
  EXPECT_EQ(split(q, "\u0915\u093f\u0928 \u0e2a\u0e27\u0e31"),
            (Pieces{"\u0915", "\u093f\u0928", " \u0e2a\u0e27", "\u0e31"}));
  EXPECT_EQ(split(q, "Hello world's END'S it'\u017f 'LL"),
            (Pieces{"Hello", " world", "'s", " END", "'S", " it", "'\u017f", " '", "LL"}));
}

TEST(PreTokenizer, LongRunsAreOnePieceEach) {
  const std::string spaces(200000, ' ');
  EXPECT_EQ(split(PreTokenizer::kQwen35, spaces + "x"), (Pieces{std::string(199999, ' '), " x"}));
  const std::string word(200000, 'a');
  EXPECT_EQ(split(PreTokenizer::kQwen35, word), Pieces{word});
}

TEST(PreTokenizer, CharacterClassesMatchHfRegexEngine) {
  const auto classes =
      nlohmann::json::parse(test::read_text_file(test::tokenizer_fixture_dir() + "/unicode_classes.json"));
  const std::pair<const char*, uint8_t> names[] = {
      {"space", kClassSpace}, {"letter", kClassLetter}, {"mark", kClassMark}, {"number", kClassNumber}};
  for (const auto& [name, bit] : names) {
    std::vector<bool> member(0x110000, false);
    for (const auto& range : classes.at(name)) {
      for (uint32_t cp = range[0].get<uint32_t>(); cp <= range[1].get<uint32_t>(); ++cp) member[cp] = true;
    }
    size_t mismatches = 0;
    for (char32_t cp = 0; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      if (((char_class(cp) & bit) != 0) != member[cp] && ++mismatches <= 3) {
        ADD_FAILURE() << name << ": U+" << std::hex << static_cast<uint32_t>(cp);
      }
    }
    EXPECT_EQ(mismatches, 0u) << name;
  }
}

}  // namespace
}  // namespace tern::text
