// Tokenizer and streaming detokenizer on a small hand-made vocabulary: added-token matching, BPE by
// rank, long inputs, UTF-8 safety of the stream, and import errors.
#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/text/test_vocab.h"
#include "text/detokenizer.h"

namespace tern::text {
namespace {

// Ids 0..255: the bytes; then merged tokens, then added tokens.
Vocab small_vocab() {
  Vocab v = testing::byte_vocab();
  auto add = [&](std::string text, TokenType type) {
    v.tokens.push_back(std::move(text));
    v.types.push_back(type);
    return static_cast<int32_t>(v.tokens.size() - 1);
  };
  add("ab", TokenType::kNormal);              // 256
  add("bc", TokenType::kNormal);              // 257
  add("abc", TokenType::kNormal);             // 258
  add("aa", TokenType::kNormal);              // 259
  add("<|im_start|>", TokenType::kControl);   // 260
  add("<|im_start|>x", TokenType::kControl);  // 261
  add("<think>", TokenType::kUserDefined);    // 262
  add("[PAD263]", TokenType::kUnused);        // 263
  v.merges = {{"b", "c"}, {"a", "b"}, {"a", "bc"}, {"a", "a"}};
  return v;
}

TEST(Tokenizer, MergesByRankNotByPosition) {
  const Tokenizer t(small_vocab());
  // "bc" (rank 0) beats "ab" (rank 1), then "a"+"bc" (rank 2) gives "abc".
  EXPECT_EQ(t.encode("abc"), (std::vector<int32_t>{258}));
  EXPECT_EQ(t.encode("ab"), (std::vector<int32_t>{256}));
  // Equal ranks: the leftmost pair first.
  EXPECT_EQ(t.encode("aaa"), (std::vector<int32_t>{259, 'a'}));
}

TEST(Tokenizer, AddedTokensLongestMatchFirst) {
  const Tokenizer t(small_vocab());
  EXPECT_EQ(t.encode("<|im_start|>xy"), (std::vector<int32_t>{261, 'y'}));
  EXPECT_EQ(t.encode("a<|im_start|>b"), (std::vector<int32_t>{'a', 260, 'b'}));
  EXPECT_EQ(t.encode("<think><|im_start"),
            (std::vector<int32_t>{262, '<', '|', 'i', 'm', '_', 's', 't', 'a', 'r', 't'}));
}

TEST(Tokenizer, ControlTokensOnlyWhenParsingSpecial) {
  const Tokenizer t(small_vocab());
  const std::vector<int32_t> ids = t.encode("<|im_start|><think>", false);
  // The control token's text falls to BPE byte by byte (this vocabulary has no merges for it); the
  // USER_DEFINED token is matched anyway.
  std::vector<int32_t> expected;
  for (char c : std::string("<|im_start|>")) expected.push_back(static_cast<uint8_t>(c));
  expected.push_back(262);
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(t.decode(ids), "<|im_start|><think>");
}

TEST(Tokenizer, DecodesBytesAndHidesControlOnRequest) {
  const Tokenizer t(small_vocab());
  const std::vector<int32_t> ids{260, 258, ' ', 0xC3, 0xA9, 263};
  EXPECT_EQ(t.decode(ids), "<|im_start|>abc \xC3\xA9");
  EXPECT_EQ(t.decode(ids, false), "abc \xC3\xA9");
  EXPECT_THROW(t.decode(std::vector<int32_t>{264}), Error);
  EXPECT_THROW(t.decode(std::vector<int32_t>{-1}), Error);
}

TEST(Tokenizer, RejectsInvalidUtf8) {
  const Tokenizer t(small_vocab());
  EXPECT_THROW(t.encode("ab\xC3"), Error);
  EXPECT_THROW(t.encode("\xED\xA0\x80"), Error);  // a surrogate
}

TEST(Tokenizer, LongWordAndWhitespaceRunEncode) {
  // Sanity that nothing is quadratic: 100k-character pieces go through BPE and the pre-tokenizer.
  const Tokenizer t(small_vocab());
  const std::string word(100000, 'a');
  const std::vector<int32_t> ids = t.encode(word);
  EXPECT_EQ(ids, std::vector<int32_t>(50000, 259));
  const std::string spaces(100000, ' ');
  EXPECT_EQ(t.decode(t.encode(spaces + "abc" + spaces)), spaces + "abc" + spaces);
}

TEST(Tokenizer, RejectsInconsistentVocab) {
  Vocab bad_merge = small_vocab();
  bad_merge.merges.push_back({"b", "b"});  // "bb" is not a token
  EXPECT_THROW(Tokenizer{bad_merge}, Error);
  Vocab not_byte_level = small_vocab();
  not_byte_level.tokens[256] = "a b";  // a raw space is not byte-level text
  EXPECT_THROW(Tokenizer{not_byte_level}, Error);
}

TEST(StreamingDetokenizer, NeverEmitsPartialUtf8) {
  const Tokenizer t(small_vocab());
  StreamingDetokenizer d(t);
  // U+1F600 (F0 9F 98 80) arriving one byte per token, then 'a'.
  EXPECT_EQ(d.push(0xF0), "");
  EXPECT_EQ(d.push(0x9F), "");
  EXPECT_EQ(d.push(0x98), "");
  EXPECT_EQ(d.push(0x80), "\xF0\x9F\x98\x80");
  EXPECT_EQ(d.push('a'), "a");
  // é split across tokens, with a control token hidden in between.
  EXPECT_EQ(d.push(0xC3), "");
  EXPECT_EQ(d.push(260), "");
  EXPECT_EQ(d.push(0xA9), "\xC3\xA9");
  EXPECT_EQ(d.flush(), "");
}

TEST(StreamingDetokenizer, ReplacesBytesThatCannotBecomeUtf8) {
  const Tokenizer t(small_vocab());
  StreamingDetokenizer d(t, true);
  EXPECT_EQ(d.push(0xFF), "\xEF\xBF\xBD");
  EXPECT_EQ(d.push(0xE4), "");
  EXPECT_EQ(d.push('x'), "\xEF\xBF\xBDx");  // the sequence was cut short
  EXPECT_EQ(d.push(260), "<|im_start|>");
  EXPECT_EQ(d.push(0xE4), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");
}

TEST(ImportHfTokenizer, MapsTypesPadsAndSpecialIds) {
  const std::string json = R"({
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
    "added_tokens": [
      {"id": 4, "content": "<|im_end|>", "special": true},
      {"id": 5, "content": "<think>", "special": false},
      {"id": 7, "content": "<|x|>", "special": false}],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}})";
  const std::string config = R"({"eos_token": "<|im_end|>", "pad_token": {"content": "<think>"},
    "bos_token": null, "add_bos_token": false, "chat_template": "{{ x }}"})";
  const Vocab v = import_hf_tokenizer(json, &config, 10);
  ASSERT_EQ(v.tokens.size(), 10u);
  EXPECT_EQ(v.pre, PreTokenizer::kQwen35);
  EXPECT_EQ(v.tokens[3], "[PAD3]");
  EXPECT_EQ(v.types[3], TokenType::kUnused);
  EXPECT_EQ(v.types[4], TokenType::kControl);
  EXPECT_EQ(v.types[5], TokenType::kUserDefined);
  EXPECT_EQ(v.types[7], TokenType::kControl);  // spelled <|...|>
  EXPECT_EQ(v.tokens[9], "[PAD9]");
  EXPECT_EQ(v.merges, (std::vector<std::pair<std::string, std::string>>{{"a", "b"}}));
  EXPECT_EQ(v.eos_id, 4u);
  EXPECT_EQ(v.pad_id, 5u);
  EXPECT_FALSE(v.bos_id.has_value());
  EXPECT_EQ(v.chat_template, "{{ x }}");
  EXPECT_THROW(import_hf_tokenizer(json, &config, 5), Error);  // does not fit
  EXPECT_THROW(import_hf_tokenizer("{", nullptr), Error);
  EXPECT_THROW(import_hf_tokenizer(R"({"model": {"type": "Unigram"}})", nullptr), Error);
}

}  // namespace
}  // namespace tern::text
