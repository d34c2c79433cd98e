// The tokenizer against HF tokenizers on real Qwen vocabularies (fixtures from
// tools/reference/make_tokenizer_fixtures.py): identical ids on the whole corpus, and decode(encode(s))
// == NFC(s).
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/text/tokenizer_fixtures.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace tern::text {
namespace {

class TokenizerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerFixture, MatchesHfTokenizersOnCorpus) {
  const std::string dir = test::tokenizer_fixture_dir() + "/" + GetParam();
  const std::string config = test::read_text_file(dir + "/tokenizer_config.json");
  const Tokenizer tokenizer(import_hf_tokenizer(test::read_gzip_file(dir + "/tokenizer.json.gz"), &config));
  const auto corpus = test::read_corpus();
  const auto expected = test::read_expected_ids(GetParam());
  ASSERT_EQ(corpus.size(), expected.size());
  ASSERT_GE(corpus.size(), 2000u);

  size_t id_mismatches = 0, round_trip_mismatches = 0, tokens = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::vector<int32_t> ids = tokenizer.encode(corpus[i]);
    tokens += ids.size();
    if (ids != expected[i]) {
      if (++id_mismatches <= 5) ADD_FAILURE() << "ids differ on corpus line " << i + 1 << ": " << corpus[i];
    }
    std::string nfc;
    append_nfc(corpus[i], nfc);
    if (tokenizer.decode(ids) != nfc) {
      if (++round_trip_mismatches <= 5) ADD_FAILURE() << "decode(encode) != NFC on line " << i + 1;
    }
  }
  std::printf(
      "[ %s ] %zu tokens, %zu strings, %zu tokens encoded, %zu id mismatches, %zu round-trip mismatches\n",
      GetParam().c_str(), tokenizer.size(), corpus.size(), tokens, id_mismatches, round_trip_mismatches);
  EXPECT_EQ(id_mismatches, 0u);
  EXPECT_EQ(round_trip_mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(RealQwenVocabularies, TokenizerFixture,
                         ::testing::ValuesIn(test::fixture_vocab_names()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace tern::text
