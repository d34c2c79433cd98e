// The GGUF fuzzer's seed corpus (fuzz/corpus/gguf/) is made by the Writer here. The test checks that
// the committed seeds are exactly what the Writer makes today and that they parse; run it with
// TERN_UPDATE_FUZZ_CORPUS=1 to rewrite them after a deliberate format change.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_files.h"

namespace tern::gguf {
namespace {

using quant::TensorType;
using testing::read_bytes;
using testing::ScratchPath;

struct Seed {
  std::string file;
  std::function<void(const std::string& path)> make;
};

void write_tensors(Writer& w) {
  w.begin_data();
  for (size_t t = 0; t < w.tensor_count(); ++t) {
    std::vector<uint8_t> bytes(w.tensor_bytes(t));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 13 + t);
    w.write(bytes);
  }
  w.finish();
}

std::vector<Seed> seeds() {
  return {
      {"empty", [](const std::string& path) { Writer(path).finish(); }},
      {"metadata-all-types",
       [](const std::string& path) {
         Writer w(path);
         w.set("general.architecture", Value::string("qwen35"));
         w.set("a.u8", Value::u8(1));
         w.set("a.i8", Value::i8(-2));
         w.set("a.u16", Value::u16(3));
         w.set("a.i16", Value::i16(-4));
         w.set("a.u32", Value::u32(5));
         w.set("a.i32", Value::i32(-6));
         w.set("a.f32", Value::f32(0.5f));
         w.set("a.bool", Value::boolean(true));
         w.set("a.u64", Value::u64(7));
         w.set("a.i64", Value::i64(-8));
         w.set("a.f64", Value::f64(0.25));
         w.set("a.empty", Value::string(""));
         w.set("a.bools", Value::array(ValueType::kBool, {Value::boolean(false), Value::boolean(true)}));
         w.set("a.nested",
               Value::array(ValueType::kArray, {Value::i32_array({1, 2}), Value::string_array({"x"}),
                                                Value::array(ValueType::kArray, {})}));
         w.finish();
       }},
      {"tensors-all-types",
       [](const std::string& path) {
         Writer w(path);
         w.set("general.name", Value::string("seed"));
         w.add_tensor("f32", TensorType::kF32, {4, 2});
         w.add_tensor("f16", TensorType::kF16, {8});
         w.add_tensor("bf16", TensorType::kBF16, {2, 2});
         w.add_tensor("empty", TensorType::kF32, {0, 3});
         w.add_tensor("q2", TensorType::kQ2_0, {64});
         w.add_tensor("pq2", TensorType::kPQ2_0, {128, 2});
         w.add_tensor("ptq1", TensorType::kPTQ1_0, {128, 1, 1, 1});
         write_tensors(w);
       }},
      {"alignment-64",
       [](const std::string& path) {
         Writer w(path, 64);
         w.add_tensor("a", TensorType::kF32, {3});
         w.add_tensor("b", TensorType::kF16, {5, 2});
         write_tensors(w);
       }},
      {"tokenizer-like",
       [](const std::string& path) {
         Writer w(path);
         w.set("tokenizer.ggml.model", Value::string("gpt2"));
         w.set("tokenizer.ggml.tokens", Value::string_array({"a", "b", "ab", "\xc4\xa0", "<|im_end|>"}));
         w.set("tokenizer.ggml.token_type", Value::i32_array({1, 1, 1, 1, 3}));
         w.set("tokenizer.ggml.merges", Value::string_array({"a b"}));
         w.set("tokenizer.ggml.eos_token_id", Value::u32(4));
         w.add_tensor("token_embd.weight", TensorType::kF16, {4, 5});
         write_tensors(w);
       }},
  };
}

TEST(GgufFuzzCorpus, CommittedSeedsAreWhatTheWriterMakesAndParse) {
  const std::filesystem::path dir = std::filesystem::path(TERN_SOURCE_DIR) / "fuzz/corpus/gguf";
  const bool update = std::getenv("TERN_UPDATE_FUZZ_CORPUS") != nullptr;
  for (const Seed& seed : seeds()) {
    SCOPED_TRACE(seed.file);
    const std::string committed = (dir / seed.file).string();
    if (update) seed.make(committed);
    ScratchPath fresh(seed.file);
    seed.make(fresh.str());
    EXPECT_EQ(read_bytes(committed), read_bytes(fresh.str())) << "rerun with TERN_UPDATE_FUZZ_CORPUS=1";
    EXPECT_NO_THROW(Reader::open(committed));
  }
}

}  // namespace
}  // namespace tern::gguf
