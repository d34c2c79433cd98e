#include "tests/support/tiny_qwen35.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

#include "gguf/writer.h"
#include "quant/codec.h"

namespace tern::testing {
namespace {

using gguf::Value;
using quant::TensorType;

Value u32(int64_t v) {
  return Value::u32(static_cast<uint32_t>(v));
}

std::vector<uint8_t> tensor_bytes(const TinyQwen35::Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t k = t.ne[0];
  int64_t rows = 1;
  for (size_t i = 1; i < t.ne.size(); ++i) rows *= t.ne[i];
  const size_t row = *quant::row_bytes(t.type, k);
  std::vector<uint8_t> out(row * static_cast<size_t>(rows));
  std::vector<float> values(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : values) v = dist(rng);
    quant::quantize_row(t.type, values.data(), out.data() + static_cast<size_t>(r) * row, k);
  }
  return out;
}

}  // namespace

TinyQwen35& TinyQwen35::make() {
  metadata.clear();
  tensors.clear();
  const int64_t inner = gdn_n_v * gdn_v_dim;
  const int64_t channels = 2 * gdn_n_k * gdn_k_dim + inner;
  const int64_t attn_out = n_head * head_dim;
  set("general.architecture", Value::string("qwen35"));
  set("general.name", Value::string("tiny"));
  set("general.file_type", u32(141));
  set("qwen35.context_length", u32(4096));
  set("qwen35.embedding_length", u32(d));
  set("qwen35.block_count", u32(n_layer));
  set("qwen35.feed_forward_length", u32(d_ff));
  set("qwen35.attention.head_count", u32(n_head));
  set("qwen35.attention.head_count_kv", u32(n_head_kv));
  set("qwen35.attention.key_length", u32(head_dim));
  set("qwen35.attention.value_length", u32(head_dim));
  set("qwen35.attention.layer_norm_rms_epsilon", Value::f32(1e-6f));
  set("qwen35.rope.freq_base", Value::f32(1e7f));
  set("qwen35.rope.dimension_count", u32(rope_dim));
  set("qwen35.rope.dimension_sections", Value::i32_array({6, 5, 5, 0}));
  set("qwen35.ssm.conv_kernel", u32(conv_kernel));
  set("qwen35.ssm.state_size", u32(gdn_k_dim));
  set("qwen35.ssm.inner_size", u32(inner));
  set("qwen35.ssm.time_step_rank", u32(gdn_n_v));
  set("qwen35.ssm.group_count", u32(gdn_n_k));
  set("qwen35.full_attention_interval", u32(4));

  std::vector<std::string> tokens;
  for (int64_t i = 0; i < vocab; ++i) tokens.push_back(fmt::format("tok{}", i));
  tokens[static_cast<size_t>(vocab - 6)] = "<|endoftext|>";
  tokens[static_cast<size_t>(vocab - 5)] = "<|im_end|>";
  tokens[static_cast<size_t>(vocab - 4)] = "<|fim_pad|>";
  tokens[static_cast<size_t>(vocab - 3)] = "<|repo_name|>";
  set("tokenizer.ggml.model", Value::string("gpt2"));
  set("tokenizer.ggml.pre", Value::string("qwen35"));
  set("tokenizer.ggml.tokens", Value::string_array(tokens));
  set("tokenizer.ggml.eos_token_id", u32(vocab - 5));
  set("tokenizer.ggml.padding_token_id", u32(vocab - 6));
  set("tokenizer.ggml.add_bos_token", Value::boolean(false));
  set("tokenizer.chat_template", Value::string("{{ messages }}"));

  add_tensor("token_embd.weight", ternary, {d, vocab});
  add_tensor("output_norm.weight", TensorType::kF32, {d});
  add_tensor("output.weight", ternary, {d, vocab});
  std::vector<std::string> folded;
  for (int64_t l = 0; l < n_layer; ++l) {
    auto name = [l](const char* kind) { return fmt::format("blk.{}.{}", l, kind); };
    auto folded_tensor = [&](const char* kind, std::vector<int64_t> ne) {
      add_tensor(name(kind), ternary, std::move(ne));
      folded.push_back(name(kind));
    };
    add_tensor(name("attn_norm.weight"), TensorType::kF32, {d});
    add_tensor(name("post_attention_norm.weight"), TensorType::kF32, {d});
    if (std::ranges::find(attention_layers, l) != attention_layers.end()) {
      folded_tensor("attn_q.weight", {d, 2 * n_head * head_dim});
      folded_tensor("attn_k.weight", {d, n_head_kv * head_dim});
      folded_tensor("attn_v.weight", {d, n_head_kv * head_dim});
      folded_tensor("attn_output.weight", {attn_out, d});
      add_tensor(name("attn_q_norm.weight"), TensorType::kF32, {head_dim});
      add_tensor(name("attn_k_norm.weight"), TensorType::kF32, {head_dim});
    } else {
      folded_tensor("attn_qkv.weight", {d, channels});
      folded_tensor("attn_gate.weight", {d, inner});
      add_tensor(name("ssm_alpha.weight"), TensorType::kBF16, {d, gdn_n_v});
      add_tensor(name("ssm_beta.weight"), TensorType::kBF16, {d, gdn_n_v});
      add_tensor(name("ssm_conv1d.weight"), TensorType::kF32, {conv_kernel, channels});
      add_tensor(name("ssm_a"), TensorType::kF32, {gdn_n_v});
      add_tensor(name("ssm_dt.bias"), TensorType::kF32, {gdn_n_v});
      add_tensor(name("ssm_norm.weight"), TensorType::kF32, {gdn_v_dim});
      folded_tensor("ssm_out.weight", {inner, d});
    }
    folded_tensor("ffn_gate.weight", {d, d_ff});
    folded_tensor("ffn_up.weight", {d, d_ff});
    folded_tensor("ffn_down.weight", {d_ff, d});
  }
  folded.push_back("output.weight");

  // Distinct widths; attention output (n_head*head_dim) and GDN inner coincide here, as in the 27B.
  std::vector<int32_t> widths{static_cast<int32_t>(d), static_cast<int32_t>(inner),
                              static_cast<int32_t>(d_ff)};
  std::vector<int32_t> signs;
  std::mt19937 rng(1234);
  for (int32_t w : widths) {
    for (int32_t i = 0; i < w; ++i) signs.push_back((rng() & 1u) != 0 ? 1 : -1);
  }
  set("prism.hadamard.version", u32(1));
  set("prism.hadamard.block_size", u32(block));
  set("prism.hadamard.transform", Value::string("normalized-sylvester-walsh-hadamard"));
  set("prism.hadamard.axis", Value::string("input-last-dimension"));
  set("prism.hadamard.sign_mode", Value::string("explicit"));
  set("prism.hadamard.sign_widths", Value::i32_array(widths));
  set("prism.hadamard.sign_values", Value::i32_array(signs));
  set("prism.hadamard.weight_names", Value::string_array(folded));
  set("prism.hadamard.inverse_weight_names", Value::string_array({"token_embd.weight"}));
  set("prism.hadamard.gdn_v_grouped", Value::boolean(true));
  return *this;
}

void TinyQwen35::set(const std::string& key, gguf::Value value) {
  if (gguf::Value* v = find(key)) {
    *v = std::move(value);
  } else {
    metadata.emplace_back(key, std::move(value));
  }
}

void TinyQwen35::erase(const std::string& key) {
  std::erase_if(metadata, [&](const auto& kv) { return kv.first == key; });
}

gguf::Value* TinyQwen35::find(const std::string& key) {
  for (auto& [k, v] : metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

TinyQwen35::Tensor& TinyQwen35::tensor(const std::string& name) {
  for (Tensor& t : tensors) {
    if (t.name == name) return t;
  }
  throw std::logic_error("tiny model has no tensor " + name);
}

void TinyQwen35::erase_tensor(const std::string& name) {
  std::erase_if(tensors, [&](const Tensor& t) { return t.name == name; });
}

void TinyQwen35::add_tensor(std::string name, quant::TensorType type, std::vector<int64_t> ne) {
  tensors.push_back({std::move(name), type, std::move(ne)});
}

void TinyQwen35::set_weight_names(const std::vector<std::string>& names) {
  set("prism.hadamard.weight_names", Value::string_array(names));
}

std::vector<std::string> TinyQwen35::weight_names() {
  std::vector<std::string> names;
  for (const Value& v : std::get<gguf::Array>(find("prism.hadamard.weight_names")->data).items) {
    names.push_back(std::get<std::string>(v.data));
  }
  return names;
}

void TinyQwen35::write(const std::string& path) const {
  gguf::Writer writer(path);
  for (const auto& [key, value] : metadata) writer.set(key, value);
  for (const Tensor& t : tensors) writer.add_tensor(t.name, t.type, t.ne);
  writer.begin_data();
  uint32_t seed = 1;
  for (const Tensor& t : tensors) writer.write(tensor_bytes(t, seed++));
  writer.finish();
}

namespace {
// TempFiles alive in this process: their directory goes only with the last, so a path handed out earlier
// and not yet written stays writable.
std::atomic<int> live_temp_files{0};
}  // namespace

TempFile::TempFile(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  // One directory per process: only this process creates and removes it, so no other test process can
  // remove it between our creating it and writing into it.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("tern_tests.{}", ::getpid());
  std::filesystem::create_directories(dir);
  ++live_temp_files;
  std::string file = fmt::format("{}.{}.{}", info->test_suite_name(), info->name(), name);
  std::ranges::replace(file, '/', '_');  // parameterised test names contain '/'
  path_ = (dir / file).string();
}

TempFile::~TempFile() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
  if (--live_temp_files == 0) std::filesystem::remove(std::filesystem::path(path_).parent_path(), ignored);
}

}  // namespace tern::testing
