#include "tools/inspect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "gguf/reader.h"
#include "tests/support/tiny_qwen35.h"

namespace tern::tools {
namespace {

using gguf::Value;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::TinyQwen35;

json report_for(const TinyQwen35& model) {
  const testing::TempFile file("model.gguf");
  model.write(file.path());
  return inspect_report(gguf::Reader::open(file.path()));
}

TinyQwen35 tiny() {
  TinyQwen35 model;
  model.make();
  return model;
}

const json& by_type(const json& report, const std::string& type) {
  for (const json& row : report["tensors"]["by_type"]) {
    if (row["type"] == type) return row;
  }
  throw std::runtime_error("no tensor type " + type);
}

TEST(Inspect, ReportsLayersDimensionsAndTensors) {
  const json r = report_for(tiny());
  EXPECT_EQ(r["architecture"], "qwen35");
  EXPECT_EQ(r["context_length"], 4096);
  EXPECT_EQ(r["layers"]["count"], 4);
  EXPECT_EQ(r["layers"]["full_attention"], json::array({3}));
  EXPECT_EQ(r["layers"]["gated_deltanet"], 3);
  EXPECT_EQ(r["dimensions"]["d_model"], 256);
  EXPECT_EQ(r["dimensions"]["gdn"]["v_head_dim"], 32);
  // 2 (embedding, head) + 3 GDN layers x 6 + 1 attention layer x 7 ternary tensors.
  const json& pq2 = by_type(r, "pq2_0");
  EXPECT_EQ(pq2["count"], 27);
  EXPECT_EQ(pq2["bytes"].get<uint64_t>() * 128, pq2["elements"].get<uint64_t>() / 128 * 34 * 128);
  EXPECT_DOUBLE_EQ(pq2["bits_per_weight"].get<double>(), 2.125);
  EXPECT_EQ(by_type(r, "bf16")["count"], 6);
  EXPECT_EQ(by_type(r, "f32")["count"], 23);
  EXPECT_EQ(r["tensors"]["total"]["count"], 56);
}

TEST(Inspect, ReportsTheHadamardContract) {
  TinyQwen35 model = tiny();
  const json r = report_for(model);
  const json& h = r["hadamard"];
  EXPECT_EQ(h["version"], 1);
  EXPECT_EQ(h["block_size"], 64);
  EXPECT_EQ(h["sign_mode"], "explicit");
  EXPECT_EQ(h["rotated"], 26);
  EXPECT_EQ(h["inverse"], json::array({"token_embd.weight"}));
  EXPECT_EQ(h["gdn_v_order"], "grouped");
  const auto& values = std::get<gguf::Array>(model.find("prism.hadamard.sign_values")->data).items;
  int64_t minus_ones_256 = 0;
  for (size_t i = 0; i < 256; ++i) minus_ones_256 += std::get<int64_t>(values[i].data) == -1 ? 1 : 0;
  ASSERT_EQ(h["sign_widths"].size(), 3u);
  EXPECT_EQ(h["sign_widths"][0]["width"], 256);
  EXPECT_EQ(h["sign_widths"][0]["minus_ones"], minus_ones_256);
  EXPECT_GT(minus_ones_256, 0);
}

TEST(Inspect, ReportsTokenizerAndStopTokens) {
  const json t = report_for(tiny())["tokenizer"];
  EXPECT_EQ(t["model"], "gpt2");
  EXPECT_EQ(t["pre"], "qwen35");
  EXPECT_EQ(t["vocab_size"], 64);
  EXPECT_TRUE(t["bos_token_id"].is_null());
  EXPECT_EQ(t["eos_token_id"], 59);
  EXPECT_EQ(t["padding_token_id"], 58);
  EXPECT_EQ(t["add_bos_token"], false);
  EXPECT_EQ(t["chat_template"]["present"], true);
  EXPECT_EQ(t["chat_template"]["length"], 14);
  EXPECT_EQ(t["stop_tokens"], json::parse(R"([{"id":58,"text":"<|endoftext|>"},{"id":59,"text":"<|im_end|>"},
                                              {"id":60,"text":"<|fim_pad|>"},{"id":61,"text":"<|repo_name|>"}])"));
}

TEST(Inspect, NotesIntegerKeysOfAnotherWidth) {
  TinyQwen35 model = tiny();
  model.set("qwen35.block_count", Value::i32(4));
  model.set("prism.hadamard.block_size", Value::u64(64));
  const json notes = report_for(model)["integer_width_leniency"];
  EXPECT_EQ(notes, json::parse(R"([
      {"key":"qwen35.block_count","expected":"uint32","found":"int32"},
      {"key":"prism.hadamard.block_size","expected":"uint32","found":"uint64"}])"));
}

TEST(Inspect, RendersText) {
  const std::string text = render_inspect_text(report_for(tiny()));
  EXPECT_THAT(text, HasSubstr("architecture qwen35"));
  EXPECT_THAT(text, HasSubstr("1 full attention at [3]"));
  EXPECT_THAT(text, HasSubstr("pq2_0"));
  EXPECT_THAT(text, HasSubstr("26 rotated"));
  EXPECT_THAT(text, HasSubstr("59 <|im_end|>"));
}

TEST(Inspect, FailsLikeLoadingOnABrokenModel) {
  TinyQwen35 shapes = tiny();
  shapes.tensor("blk.0.attn_gate.weight").ne = {256, 256};
  EXPECT_THROW(report_for(shapes), Error);
  TinyQwen35 contract = tiny();
  contract.set("prism.hadamard.transform", Value::string("dct"));
  try {
    report_for(contract);
    ADD_FAILURE() << "accepted a broken contract";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kContract);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(InspectCli, PrintsTheJsonReport) {
  const testing::TempFile model_file("model.gguf");
  const testing::TempFile out("stdout.txt");
  tiny().write(model_file.path());
  const std::string command =
      std::string(TERN_BINARY) + " inspect --json " + model_file.path() + " > " + out.path();
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(json::parse(read_file(out.path())), inspect_report(gguf::Reader::open(model_file.path())));
}

TEST(InspectCli, FailsWithOneLineOnABrokenModel) {
  const testing::TempFile model_file("model.gguf");
  const testing::TempFile err("stderr.txt");
  TinyQwen35 model = tiny();
  model.set("prism.hadamard.axis", Value::string("rows"));
  model.write(model_file.path());
  const std::string command =
      std::string(TERN_BINARY) + " inspect " + model_file.path() + " 2> " + err.path();
  EXPECT_NE(std::system(command.c_str()), 0);
  const std::string message = read_file(err.path());
  EXPECT_THAT(message, HasSubstr("tern: error: "));
  EXPECT_THAT(message, HasSubstr("prism.hadamard.axis"));
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1);
}

}  // namespace
}  // namespace tern::tools
