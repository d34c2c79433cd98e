#include "tools/synth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/error.h"
#include "core/half.h"
#include "gguf/reader.h"
#include "hadamard/contract.h"
#include "hadamard/transform.h"
#include "model/config.h"
#include "model/fold_coverage.h"
#include "quant/codec.h"
#include "text/vocab.h"
#include "tools/synth_plan.h"
#include "tools/synth_vocab.h"

namespace tern::tools {
namespace {

using quant::TensorType;

// Unique per process: several checkouts may run these tests at once on one machine.
std::string temp_path(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / ("tern_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

SynthReport make(const SynthSpec& spec, const std::string& path, int threads = 2) {
  SynthOptions options;
  options.out_path = path;
  options.threads = threads;
  return write_synth_model(spec, builtin_vocab(spec.vocab), options);
}

std::vector<float> dequantized_row(const gguf::TensorInfo& t, int64_t row) {
  const auto k = t.ne[0];
  const size_t bytes = *quant::row_bytes(t.type, k);
  std::vector<float> out(static_cast<size_t>(k));
  quant::dequantize_row(t.type, t.data.data() + static_cast<size_t>(row) * bytes, out.data(), k);
  return out;
}

std::vector<uint8_t> stored_row(const gguf::TensorInfo& t, int64_t row) {
  const size_t bytes = *quant::row_bytes(t.type, t.ne[0]);
  const uint8_t* begin = t.data.data() + static_cast<size_t>(row) * bytes;
  return {begin, begin + bytes};
}

double correlation(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0.0, aa = 0.0, bb = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double{a[i]} * b[i];
    aa += double{a[i]} * a[i];
    bb += double{b[i]} * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

const TensorRecipe& recipe_named(const std::vector<TensorRecipe>& recipes, const std::string& name) {
  for (const TensorRecipe& r : recipes) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no recipe " + name);
}

// The HF (grouped) head stored in tiled slot j, written out here independently of source_row:
// slot j = r·n_k + k holds grouped head k·rep + r (model-spec §4.5).
int64_t grouped_head_of_slot(int64_t j, int64_t n_k, int64_t rep) {
  return (j % n_k) * rep + j / n_k;
}

class SynthTiny : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    spec_ = new SynthSpec(synth_preset("tiny"));
    path_ = new std::string(temp_path("synth_tiny.gguf"));
    make(*spec_, *path_);
  }
  static void TearDownTestSuite() {
    std::remove(path_->c_str());
    delete spec_;
    delete path_;
  }

  // The stored bytes a row gets from the grouped original row `source`: the converter's pipeline
  // (model-spec §4.2) spelt out with the public building blocks.
  static std::vector<uint8_t> expected_bytes(const TensorRecipe& r, int64_t source, const SignTable& signs) {
    std::vector<float> row(static_cast<size_t>(r.cols));
    original_row(spec_->seed, r, source, row);
    if (r.folded()) hadamard::forward(row, signs.signs_for(r.cols), spec_->block_size);
    if (r.storage == Storage::kNegExp) {
      for (float& x : row) x = -std::exp(x);
    }
    std::vector<uint8_t> bytes(stored_row_bytes(r));
    quant::quantize_row(r.type, row.data(), bytes.data(), r.cols);
    return bytes;
  }

  static SynthSpec* spec_;
  static std::string* path_;
};

SynthSpec* SynthTiny::spec_ = nullptr;
std::string* SynthTiny::path_ = nullptr;

TEST_F(SynthTiny, HasEveryTensorOfItsLayerKindsWithSpecShapesAndTypes) {
  const auto file = gguf::Reader::open(*path_);
  const SynthSpec& s = *spec_;
  const TensorType t = s.ternary_type;
  struct Expected {
    std::string name;
    TensorType type;
    std::vector<int64_t> ne;
  };
  // model-spec §2.7, written in the spec's dimensions.
  std::vector<Expected> expected = {{"token_embd.weight", t, {s.d_model, s.vocab}},
                                    {"output_norm.weight", TensorType::kF32, {s.d_model}},
                                    {"output.weight", t, {s.d_model, s.vocab}}};
  const int64_t conv_channels = 2 * s.gdn_n_k * s.gdn_k_dim + s.gdn_n_v * s.gdn_v_dim;
  int attention_layers = 0;
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    expected.push_back({p + "attn_norm.weight", TensorType::kF32, {s.d_model}});
    expected.push_back({p + "post_attention_norm.weight", TensorType::kF32, {s.d_model}});
    expected.push_back({p + "ffn_gate.weight", t, {s.d_model, s.d_ff}});
    expected.push_back({p + "ffn_up.weight", t, {s.d_model, s.d_ff}});
    expected.push_back({p + "ffn_down.weight", t, {s.d_ff, s.d_model}});
    if ((l + 1) % 4 == 0) {
      ++attention_layers;
      expected.push_back({p + "attn_q.weight", t, {s.d_model, 2 * s.n_head * s.head_dim}});
      expected.push_back({p + "attn_k.weight", t, {s.d_model, s.n_head_kv * s.head_dim}});
      expected.push_back({p + "attn_v.weight", t, {s.d_model, s.n_head_kv * s.head_dim}});
      expected.push_back({p + "attn_output.weight", t, {s.n_head * s.head_dim, s.d_model}});
      expected.push_back({p + "attn_q_norm.weight", TensorType::kF32, {s.head_dim}});
      expected.push_back({p + "attn_k_norm.weight", TensorType::kF32, {s.head_dim}});
    } else {
      expected.push_back({p + "attn_qkv.weight", t, {s.d_model, conv_channels}});
      expected.push_back({p + "attn_gate.weight", t, {s.d_model, s.gdn_n_v * s.gdn_v_dim}});
      expected.push_back({p + "ssm_alpha.weight", TensorType::kBF16, {s.d_model, s.gdn_n_v}});
      expected.push_back({p + "ssm_beta.weight", TensorType::kBF16, {s.d_model, s.gdn_n_v}});
      expected.push_back({p + "ssm_conv1d.weight", TensorType::kF32, {s.conv_kernel, conv_channels}});
      expected.push_back({p + "ssm_a", TensorType::kF32, {s.gdn_n_v}});
      expected.push_back({p + "ssm_dt.bias", TensorType::kF32, {s.gdn_n_v}});
      expected.push_back({p + "ssm_norm.weight", TensorType::kF32, {s.gdn_v_dim}});
      expected.push_back({p + "ssm_out.weight", t, {s.gdn_n_v * s.gdn_v_dim, s.d_model}});
    }
  }
  EXPECT_EQ(attention_layers, 2);
  ASSERT_EQ(file.tensors().size(), expected.size());
  for (const Expected& e : expected) {
    const gguf::TensorInfo& info = file.tensor(e.name);
    EXPECT_EQ(info.type, e.type) << e.name;
    ASSERT_EQ(info.n_dims, e.ne.size()) << e.name;
    for (size_t i = 0; i < e.ne.size(); ++i) EXPECT_EQ(info.ne[i], e.ne[i]) << e.name << " ne[" << i << "]";
  }
}

TEST_F(SynthTiny, ContractListsExactlyTheFoldedNamesAndLoads) {
  const auto file = gguf::Reader::open(*path_);
  const auto contract = hadamard::read_contract(file);
  ASSERT_TRUE(contract.has_value());
  const model::Config config = model::read_config(file);
  EXPECT_NO_THROW(model::check_contract_covers(*contract, config, file));

  std::set<std::string> folded;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (quant::is_ternary(t.type) && t.name != "token_embd.weight") folded.insert(t.name);
  }
  const std::set<std::string> listed(contract->weight_names.begin(), contract->weight_names.end());
  EXPECT_EQ(listed, folded);
  EXPECT_EQ(listed.size(), contract->weight_names.size()) << "duplicates in weight_names";
  EXPECT_EQ(contract->inverse_weight_names, std::vector<std::string>{"token_embd.weight"});
  EXPECT_TRUE(contract->gdn_v_grouped);
  EXPECT_EQ(contract->block_size, spec_->block_size);
}

TEST_F(SynthTiny, HasTheLayoutRevealingGeometryOfSpec11_1) {
  const auto file = gguf::Reader::open(*path_);
  const model::Config config = model::read_config(file);
  EXPECT_GE(config.gdn_n_k, 2);
  EXPECT_GE(config.gdn_n_v / config.gdn_n_k, 2);
  EXPECT_NE(config.gdn_k_head_dim, config.gdn_v_head_dim);
  const auto contract = *hadamard::read_contract(file);
  ASSERT_EQ(contract.sign_widths.size(), 3u);
  std::set<int64_t> widths(contract.sign_widths.begin(), contract.sign_widths.end());
  EXPECT_EQ(widths.size(), 3u);
  for (const int64_t w : contract.sign_widths) {
    EXPECT_GT(w / contract.block_size, 1) << "width " << w;
    const auto signs = contract.signs_for(w);
    const auto negative = std::count(signs.begin(), signs.end(), -1.0f);
    EXPECT_GT(negative, w / 4) << "width " << w;
    EXPECT_LT(negative, 3 * w / 4) << "width " << w;
  }
  // Asymmetric ternary data: all three codes occur and blocks are not mirror images of themselves.
  if (spec_->ternary_type == TensorType::kPQ2_0) {
    const gguf::TensorInfo& t = file.tensor("blk.0.ffn_down.weight");
    int64_t counts[4] = {};
    int mirrored_blocks = 0;
    for (size_t b = 0; b < t.nbytes / quant::kPq2Bytes; ++b) {
      uint8_t codes[128];
      uint16_t d = 0;
      quant::pq2_unpack(t.data.data() + b * quant::kPq2Bytes, codes, &d);
      bool mirrored = true;
      for (int e = 0; e < 128; ++e) {
        ++counts[codes[e]];
        mirrored = mirrored && codes[e] == codes[127 - e];
      }
      mirrored_blocks += mirrored ? 1 : 0;
    }
    EXPECT_GT(counts[0], 0);
    EXPECT_GT(counts[1], 0);
    EXPECT_GT(counts[2], 0);
    EXPECT_EQ(counts[3], 0);
    EXPECT_EQ(mirrored_blocks, 0);
  }
}

TEST_F(SynthTiny, UnfoldedRowsMatchTheOriginalRowsOnlyWithTheRightSigns) {
  const auto file = gguf::Reader::open(*path_);
  const auto contract = *hadamard::read_contract(file);
  const auto recipes = plan_tensors(*spec_);
  for (const std::string name :
       {"token_embd.weight", "output.weight", "blk.0.attn_qkv.weight", "blk.0.ssm_out.weight",
        "blk.3.attn_q.weight", "blk.3.attn_output.weight", "blk.1.ffn_down.weight", "blk.2.ffn_up.weight"}) {
    const gguf::TensorInfo& t = file.tensor(name);
    const TensorRecipe& r = recipe_named(recipes, name);
    const int64_t row = t.ne[1] / 3;  // not a tiled row in attn_qkv (q part)
    std::vector<float> original(static_cast<size_t>(t.ne[0]));
    original_row(spec_->seed, r, row, original);

    std::vector<float> unfolded = dequantized_row(t, row);
    hadamard::inverse(unfolded, contract.signs_for(t.ne[0]), contract.block_size);
    EXPECT_GT(correlation(unfolded, original), 0.6) << name;

    std::vector<float> still_folded = dequantized_row(t, row);
    EXPECT_LT(std::fabs(correlation(still_folded, original)), 0.3) << name;
    std::vector<float> unsigned_unfold = dequantized_row(t, row);
    hadamard::inverse(unsigned_unfold, {}, contract.block_size);
    EXPECT_LT(std::fabs(correlation(unsigned_unfold, original)), 0.3) << name;
  }
}

TEST_F(SynthTiny, GdnVHeadRowsAreTiledAndSsmOutColumnsStayGrouped) {
  const auto file = gguf::Reader::open(*path_);
  const auto recipes = plan_tensors(*spec_);
  const SignTable signs = make_signs(spec_->seed, recipes);
  const int64_t n_k = spec_->gdn_n_k;
  const int64_t rep = spec_->gdn_n_v / n_k;
  const int64_t qk_rows = 2 * n_k * spec_->gdn_k_dim;
  struct Case {
    std::string kind;
    int64_t begin;      // first V row
    int64_t head_rows;  // rows per v head
  };
  const std::vector<Case> cases = {{"attn_qkv.weight", qk_rows, spec_->gdn_v_dim},
                                   {"attn_gate.weight", 0, spec_->gdn_v_dim},
                                   {"ssm_alpha.weight", 0, 1},
                                   {"ssm_beta.weight", 0, 1},
                                   {"ssm_conv1d.weight", qk_rows, spec_->gdn_v_dim},
                                   {"ssm_a", 0, 1},
                                   {"ssm_dt.bias", 0, 1}};
  int permuted_rows_seen = 0;
  for (const Case& c : cases) {
    const std::string name = "blk.1." + c.kind;
    const TensorRecipe& r = recipe_named(recipes, name);
    const gguf::TensorInfo& t = file.tensor(name);
    const size_t row_size = stored_row_bytes(r);
    for (int64_t row = 0; row < r.rows; ++row) {
      int64_t source = row;
      if (row >= c.begin) {
        const int64_t slot = (row - c.begin) / c.head_rows;
        source = c.begin + grouped_head_of_slot(slot, n_k, rep) * c.head_rows + (row - c.begin) % c.head_rows;
      }
      const uint8_t* stored = t.data.data() + static_cast<size_t>(row) * row_size;
      ASSERT_TRUE(std::equal(stored, stored + row_size, expected_bytes(r, source, signs).begin()))
          << name << " row " << row;
      if (source != row) {
        ++permuted_rows_seen;
        const auto unpermuted = expected_bytes(r, row, signs);
        EXPECT_FALSE(std::equal(stored, stored + row_size, unpermuted.begin())) << name << " row " << row;
      }
    }
  }
  EXPECT_GT(permuted_rows_seen, 0);

  const TensorRecipe& out = recipe_named(recipes, "blk.1.ssm_out.weight");
  const gguf::TensorInfo& t = file.tensor("blk.1.ssm_out.weight");
  for (int64_t row = 0; row < out.rows; row += 37) {
    EXPECT_EQ(stored_row(t, row), expected_bytes(out, row, signs)) << "ssm_out row " << row;
  }
}

TEST_F(SynthTiny, SsmAIsMinusExpOfALogAndDtBiasIsASmallSoftplusInverse) {
  const auto file = gguf::Reader::open(*path_);
  const auto recipes = plan_tensors(*spec_);
  const TensorRecipe& a = recipe_named(recipes, "blk.0.ssm_a");
  const auto* stored_a = reinterpret_cast<const float*>(file.tensor("blk.0.ssm_a").data.data());
  const auto* stored_dt = reinterpret_cast<const float*>(file.tensor("blk.0.ssm_dt.bias").data.data());
  const int64_t n_k = spec_->gdn_n_k;
  const int64_t rep = spec_->gdn_n_v / n_k;
  for (int64_t j = 0; j < spec_->gdn_n_v; ++j) {
    const int64_t g = grouped_head_of_slot(j, n_k, rep);
    float a_log = 0.0f;
    original_row(spec_->seed, a, g, std::span<float>(&a_log, 1));
    EXPECT_EQ(stored_a[j], -std::exp(a_log)) << "slot " << j;
    EXPECT_LE(stored_a[j], -1.0f);
    EXPECT_GE(stored_a[j], -16.0f);
    const double softplus = std::log1p(std::exp(double{stored_dt[j]}));
    EXPECT_GE(softplus, 0.9e-3) << "slot " << j;
    EXPECT_LE(softplus, 0.11) << "slot " << j;
  }
}

TEST_F(SynthTiny, NormGainsCarryThePlusOneExceptSsmNorm) {
  const auto file = gguf::Reader::open(*path_);
  const auto recipes = plan_tensors(*spec_);
  for (const std::string name :
       {"output_norm.weight", "blk.0.attn_norm.weight", "blk.0.post_attention_norm.weight",
        "blk.3.attn_q_norm.weight", "blk.3.attn_k_norm.weight", "blk.0.ssm_norm.weight"}) {
    const TensorRecipe& r = recipe_named(recipes, name);
    std::vector<float> drawn(static_cast<size_t>(r.cols));
    original_row(spec_->seed, r, 0, drawn);
    const auto* stored = reinterpret_cast<const float*>(file.tensor(name).data.data());
    const bool plus_one = name != "blk.0.ssm_norm.weight";
    double mean = 0.0;
    for (size_t i = 0; i < drawn.size(); ++i) {
      EXPECT_EQ(stored[i], plus_one ? 1.0f + drawn[i] : drawn[i]) << name << "[" << i << "]";
      mean += stored[i];
    }
    mean /= static_cast<double>(drawn.size());
    EXPECT_NEAR(mean, 1.0, 0.05) << name;  // HF-zero-centred draws, or HF gains near 1 stored raw
  }
}

TEST_F(SynthTiny, MetadataHasTheSpecKeyTypes) {
  const auto file = gguf::Reader::open(*path_);
  using gguf::ValueType;
  const std::vector<std::pair<std::string, ValueType>> keys = {
      {"general.architecture", ValueType::kString},
      {"general.file_type", ValueType::kUInt32},
      {"general.quantization_version", ValueType::kUInt32},
      {"qwen35.block_count", ValueType::kUInt32},
      {"qwen35.attention.layer_norm_rms_epsilon", ValueType::kFloat32},
      {"qwen35.rope.freq_base", ValueType::kFloat32},
      {"qwen35.rope.dimension_sections", ValueType::kArray},
      {"qwen35.ssm.inner_size", ValueType::kUInt32},
      {"tokenizer.ggml.tokens", ValueType::kArray},
      {"tokenizer.ggml.token_type", ValueType::kArray},
      {"tokenizer.ggml.merges", ValueType::kArray},
      {"tokenizer.ggml.eos_token_id", ValueType::kUInt32},
      {"tokenizer.ggml.add_bos_token", ValueType::kBool},
      {"tokenizer.chat_template", ValueType::kString},
      {"prism.hadamard.version", ValueType::kUInt32},
      {"prism.hadamard.block_size", ValueType::kUInt32},
      {"prism.hadamard.sign_widths", ValueType::kArray},
      {"prism.hadamard.sign_values", ValueType::kArray},
      {"prism.hadamard.gdn_v_grouped", ValueType::kBool},
  };
  for (const auto& [key, type] : keys) {
    const gguf::Value* v = file.find(key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->type, type) << key;
  }
  EXPECT_EQ(file.get_array("prism.hadamard.sign_values").elem_type, ValueType::kInt32);
  EXPECT_EQ(file.get_array("prism.hadamard.sign_widths").elem_type, ValueType::kInt32);
  EXPECT_EQ(file.get_array("qwen35.rope.dimension_sections").elem_type, ValueType::kInt32);
  EXPECT_EQ(file.get_uint("general.file_type"), 141u);
  EXPECT_EQ(file.get_string("tokenizer.ggml.pre"), "qwen35");
  EXPECT_FALSE(file.get_bool("tokenizer.ggml.add_bos_token"));
  EXPECT_FALSE(file.has("tokenizer.ggml.bos_token_id"));
  const auto& tokens = file.get_array("tokenizer.ggml.tokens").items;
  EXPECT_EQ(std::get<std::string>(tokens.at(file.get_uint("tokenizer.ggml.eos_token_id")).data),
            "<|im_end|>");
  EXPECT_EQ(std::get<std::string>(tokens.at(file.get_uint("tokenizer.ggml.padding_token_id")).data),
            "<|endoftext|>");
  // rope sections for 8 frequency pairs: [ceil(8/3), ceil(7/3), floor(8/3), 0] (model-spec §11.9).
  const auto& sections = file.get_array("qwen35.rope.dimension_sections").items;
  ASSERT_EQ(sections.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(sections[0].data), 3);
  EXPECT_EQ(std::get<int64_t>(sections[1].data), 3);
  EXPECT_EQ(std::get<int64_t>(sections[2].data), 2);
  EXPECT_EQ(std::get<int64_t>(sections[3].data), 0);
}

TEST_F(SynthTiny, VocabularyLoadsBackAsWritten) {
  const auto file = gguf::Reader::open(*path_);
  const text::Vocab loaded = text::load_vocab(file);
  const text::Vocab written = builtin_vocab(spec_->vocab);
  EXPECT_EQ(loaded.tokens, written.tokens);
  EXPECT_EQ(loaded.types, written.types);
  EXPECT_EQ(loaded.merges, written.merges);
  EXPECT_EQ(loaded.eos_id, written.eos_id);
  EXPECT_EQ(loaded.pad_id, written.pad_id);
  EXPECT_FALSE(loaded.bos_id.has_value());
  EXPECT_FALSE(loaded.add_bos);
  EXPECT_EQ(loaded.chat_template, builtin_chat_template());
}

TEST_F(SynthTiny, SameSeedIsByteIdenticalAtAnyThreadCountAndAnotherSeedDiffers) {
  const std::string again = temp_path("synth_tiny_again.gguf");
  make(*spec_, again, 1);
  EXPECT_TRUE(file_bytes(*path_) == file_bytes(again));
  SynthSpec other = *spec_;
  other.seed = spec_->seed + 1;
  make(other, again, 2);
  const auto a = file_bytes(*path_);
  const auto b = file_bytes(again);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_FALSE(a == b);
  std::remove(again.c_str());
}

TEST_F(SynthTiny, PtqTypeWritesTheSameTritsAsPq2) {
  const std::string ptq_path = temp_path("synth_tiny_ptq.gguf");
  SynthSpec ptq = *spec_;
  ptq.ternary_type = TensorType::kPTQ1_0;
  make(ptq, ptq_path);
  const auto pq = gguf::Reader::open(*path_);
  const auto tq = gguf::Reader::open(ptq_path);
  EXPECT_EQ(tq.get_uint("general.file_type"), 143u);
  const gguf::TensorInfo& a = pq.tensor("blk.2.attn_gate.weight");
  const gguf::TensorInfo& b = tq.tensor("blk.2.attn_gate.weight");
  EXPECT_EQ(b.type, TensorType::kPTQ1_0);
  EXPECT_EQ(b.nbytes, a.nbytes / 34 * 28);
  for (int64_t row = 0; row < a.ne[1]; row += 29) EXPECT_EQ(dequantized_row(a, row), dequantized_row(b, row));
  std::remove(ptq_path.c_str());
}

TEST(SynthSpecTest, The27bPresetHasTheRealInventoryAndByteTotals) {
  const SynthSpec spec = synth_preset("27b");
  EXPECT_NO_THROW(validate_spec(spec));
  const auto recipes = plan_tensors(spec);
  EXPECT_EQ(recipes.size(), 851u);
  size_t folded = 0;
  uint64_t ternary_blocks = 0, bf16_bytes = 0, f32_bytes = 0;
  for (const TensorRecipe& r : recipes) {
    const auto bytes = static_cast<uint64_t>(r.rows) * stored_row_bytes(r);
    if (r.folded() && !r.inverse_listed()) ++folded;
    if (quant::is_ternary(r.type)) ternary_blocks += static_cast<uint64_t>(r.rows * r.cols) / 128;
    if (r.type == TensorType::kBF16) bf16_bytes += bytes;
    if (r.type == TensorType::kF32) f32_bytes += bytes;
  }
  EXPECT_EQ(folded, 401u);
  EXPECT_EQ(ternary_blocks, 209'920'000u);
  EXPECT_EQ(ternary_blocks * quant::kPq2Bytes, 7'137'280'000u);  // model-spec §2.8
  EXPECT_EQ(ternary_blocks * quant::kPtq1Bytes, 5'877'760'000u);
  EXPECT_EQ(bf16_bytes, 47'185'920u);
  EXPECT_EQ(f32_bytes, 10'582'016u);
  EXPECT_EQ(make_signs(0, recipes).widths, (std::vector<int64_t>{5120, 6144, 17408}));
  EXPECT_EQ(spec.rope_sections(), (std::vector<int32_t>{11, 11, 10, 0}));
}

TEST(SynthSpecTest, RejectsDimensionsThatCannotMakeAValidFile) {
  const auto rejects = [](auto change) {
    SynthSpec spec = synth_preset("tiny");
    change(spec);
    EXPECT_THROW(validate_spec(spec), Error);
  };
  rejects([](SynthSpec& s) { s.d_model = 200; });    // not a multiple of 128
  rejects([](SynthSpec& s) { s.block_size = 96; });  // not a power of two
  rejects([](SynthSpec& s) {
    s.d_ff = 128 * 3;
    s.block_size = 256;
  });                                              // 384 % 256
  rejects([](SynthSpec& s) { s.gdn_n_v = 5; });    // not a multiple of n_k
  rejects([](SynthSpec& s) { s.n_head_kv = 4; });  // 6 % 4
  rejects([](SynthSpec& s) { s.rope_dim = 65; });
  rejects([](SynthSpec& s) { s.n_layer = 0; });
  rejects([](SynthSpec& s) { s.ternary_type = TensorType::kF32; });
  // What the loader refuses (model/config.cpp), synth refuses: it would write a file that cannot load.
  rejects([](SynthSpec& s) { s.rms_eps = 1.0f; });
  rejects([](SynthSpec& s) { s.rope_theta = INFINITY; });
  rejects([](SynthSpec& s) { s.rope_theta = NAN; });
  EXPECT_THROW(synth_preset("70b"), Error);
  EXPECT_THROW(builtin_vocab(200), Error);
}

TEST(SynthCli, ImportsAHuggingFaceTokenizerAndGrowsTheVocabularyToHoldIt) {
  const std::string json_path = temp_path("synth_cli_tokenizer.json");
  const std::string config_path = temp_path("synth_cli_tokenizer_config.json");
  std::ofstream(json_path) << R"({
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
    "added_tokens": [{"id": 1100, "content": "<|im_end|>", "special": true}],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}})";
  std::ofstream(config_path) << R"({"eos_token": "<|im_end|>", "add_bos_token": false})";
  const std::string path = temp_path("synth_cli_hf.gguf");
  const std::string cmd = std::string(TERN_BINARY) + " synth --layers 4 --tokenizer " + json_path +
                          " --tokenizer-config " + config_path + " -o " + path + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto file = gguf::Reader::open(path);
  EXPECT_EQ(file.tensor("token_embd.weight").ne[1], 1152);  // 1101 tokens padded to a multiple of 128
  const auto& tokens = file.get_array("tokenizer.ggml.tokens").items;
  ASSERT_EQ(tokens.size(), 1152u);
  EXPECT_EQ(std::get<std::string>(tokens[2].data), "ab");
  EXPECT_EQ(std::get<std::string>(tokens[1151].data), "[PAD1151]");
  EXPECT_EQ(file.get_uint("tokenizer.ggml.eos_token_id"), 1100u);
  EXPECT_EQ(file.get_string("tokenizer.chat_template"), builtin_chat_template());  // the config has none
  std::remove(path.c_str());
  std::remove(json_path.c_str());
  std::remove(config_path.c_str());
}

TEST(SynthCli, OverridesDimensionsAndRefusesBadOptions) {
  const std::string path = temp_path("synth_cli.gguf");
  const std::string cmd =
      std::string(TERN_BINARY) +
      " synth --preset tiny --layers 4 --d-model 384 --vocab 512 --seed 7 --type ptq1_0 -o " + path +
      " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto file = gguf::Reader::open(path);
  const model::Config config = model::read_config(file);
  EXPECT_EQ(config.n_layer, 4);
  EXPECT_EQ(config.d_model, 384);
  EXPECT_EQ(config.vocab_size, 512);
  EXPECT_EQ(file.tensor("output.weight").type, TensorType::kPTQ1_0);
  std::remove(path.c_str());
  const std::string bad = std::string(TERN_BINARY) + " synth --d-model 200 -o " + path + " 2> /dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
}

}  // namespace
}  // namespace tern::tools
