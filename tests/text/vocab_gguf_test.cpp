// tokenizer.ggml.* round trip through a GGUF file, and the tokenize/detokenize commands on it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "tests/text/tokenizer_fixtures.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace tern::text {
namespace {

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf;
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

class VocabGguf : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = test::tokenizer_fixture_dir() + "/qwen3_6";
    const std::string config = test::read_text_file(dir + "/tokenizer_config.json");
    vocab_ = import_hf_tokenizer(test::read_gzip_file(dir + "/tokenizer.json.gz"), &config, 248320);
    path_ = (std::filesystem::temp_directory_path() / ("tern_vocab_" + std::to_string(::getpid()) + ".gguf"))
                .string();
    gguf::Writer writer(path_);
    writer.set("general.architecture", gguf::Value::string("qwen35"));
    write_vocab(writer, vocab_);
    writer.begin_data();
    writer.finish();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  Vocab vocab_;
  std::string path_;
};

TEST_F(VocabGguf, RoundTripsThroughTheHeader) {
  const Vocab loaded = load_vocab(gguf::Reader::open(path_));
  EXPECT_EQ(loaded.tokens, vocab_.tokens);
  EXPECT_EQ(loaded.types, vocab_.types);
  EXPECT_EQ(loaded.merges, vocab_.merges);
  EXPECT_EQ(loaded.eos_id, vocab_.eos_id);
  EXPECT_EQ(loaded.pad_id, vocab_.pad_id);
  EXPECT_EQ(loaded.bos_id, vocab_.bos_id);
  EXPECT_EQ(loaded.add_bos, vocab_.add_bos);
  EXPECT_EQ(loaded.pre, PreTokenizer::kQwen35);
  EXPECT_EQ(loaded.chat_template, vocab_.chat_template);
  // The Qwen3.5 ids of model-spec §7.3, padded to 248320 rows.
  ASSERT_EQ(loaded.tokens.size(), 248320u);
  EXPECT_EQ(loaded.eos_id, 248046u);
  EXPECT_EQ(loaded.pad_id, 248044u);
  EXPECT_EQ(loaded.tokens[248068], "<think>");
  EXPECT_EQ(loaded.types[248068], TokenType::kUserDefined);
  EXPECT_EQ(loaded.types[248045], TokenType::kControl);
  EXPECT_EQ(loaded.types[248077], TokenType::kUnused);
  EXPECT_EQ(loaded.tokens[248319], "[PAD248319]");
}

TEST_F(VocabGguf, CommandsTokenizeAndDetokenize) {
  const std::string tern = TERN_BINARY;
  const Tokenizer tokenizer(vocab_);
  const std::vector<int32_t> ids = tokenizer.encode("<|im_start|>user\nHi there<|im_end|>");
  const std::string expected = fmt::format("{}", fmt::join(ids, " "));
  EXPECT_EQ(run_command(tern + " tokenize " + path_ + " '<|im_start|>user\nHi there<|im_end|>'"),
            expected + "\n");
  EXPECT_EQ(run_command(tern + " detokenize " + path_ + " " + expected),
            "<|im_start|>user\nHi there<|im_end|>\n");
  EXPECT_EQ(run_command(tern + " detokenize --no-special " + path_ + " " + expected), "user\nHi there\n");

  const std::string jsonl = path_ + ".jsonl";
  std::ofstream(jsonl) << "\"<|im_end|>\"\n\"a b\"\n";
  const std::vector<int32_t> a_b = tokenizer.encode("a b");
  ASSERT_EQ(a_b.size(), 2u);
  const std::string expected_lines = fmt::format("[248046]\n[{},{}]\n", a_b[0], a_b[1]);
  EXPECT_EQ(run_command(tern + " tokenize " + path_ + " --jsonl " + jsonl), expected_lines);
  std::filesystem::remove(jsonl);
}

TEST(LoadVocab, RejectsTokenTypeCountMismatch) {
  const std::string path = (std::filesystem::temp_directory_path() / "tern_vocab_bad.gguf").string();
  {
    gguf::Writer writer(path);
    writer.set("tokenizer.ggml.model", gguf::Value::string("gpt2"));
    writer.set("tokenizer.ggml.pre", gguf::Value::string("qwen35"));
    writer.set("tokenizer.ggml.tokens", gguf::Value::string_array({"a", "b"}));
    writer.set("tokenizer.ggml.token_type", gguf::Value::i32_array({1}));
    writer.set("tokenizer.ggml.merges", gguf::Value::string_array({}));
    writer.begin_data();
    writer.finish();
  }
  EXPECT_THROW(load_vocab(gguf::Reader::open(path)), Error);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tern::text
