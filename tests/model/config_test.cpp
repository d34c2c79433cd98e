#include "model/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "core/error.h"
#include "gguf/reader.h"
#include "tests/support/tiny_qwen35.h"

namespace tern::model {
namespace {

using gguf::Value;
using ::testing::HasSubstr;
using testing::TinyQwen35;
using G = LayerKind;

Config read(const TinyQwen35& model) {
  const testing::TempFile file("model.gguf");
  model.write(file.path());
  return read_config(gguf::Reader::open(file.path()));
}

TinyQwen35 tiny() {
  TinyQwen35 model;
  model.make();
  return model;
}

TEST(Config, ReadsEveryHyperparameter) {
  const Config c = read(tiny());
  EXPECT_EQ(c.architecture, "qwen35");
  EXPECT_EQ(c.n_layer, 4);
  EXPECT_EQ(c.d_model, 256);
  EXPECT_EQ(c.d_ff, 512);
  EXPECT_EQ(c.n_head, 2);
  EXPECT_EQ(c.n_head_kv, 1);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.value_dim, 64);
  EXPECT_FLOAT_EQ(static_cast<float>(c.rms_eps), 1e-6f);
  EXPECT_DOUBLE_EQ(c.rope_theta, 1e7);
  EXPECT_EQ(c.rope_dim, 32);
  EXPECT_EQ(c.rope_sections, (std::vector<int64_t>{6, 5, 5, 0}));
  EXPECT_EQ(c.context_length, 4096);
  EXPECT_EQ(c.conv_kernel, 4);
  EXPECT_EQ(c.gdn_k_head_dim, 32);
  EXPECT_EQ(c.gdn_inner, 128);
  EXPECT_EQ(c.gdn_n_v, 4);
  EXPECT_EQ(c.gdn_n_k, 2);
  EXPECT_EQ(c.gdn_v_head_dim, 32);
  EXPECT_EQ(c.gdn_conv_channels(), 256);
  EXPECT_EQ(c.vocab_size, 64);
  EXPECT_EQ(c.layers, (std::vector<LayerKind>{G::kGatedDeltaNet, G::kGatedDeltaNet, G::kGatedDeltaNet,
                                              G::kFullAttention}));
  EXPECT_EQ(c.n_attention_layers(), 1);
}

// model-spec §11.9: the GDN v-head dim is inner / n_v, not ssm.state_size.
TEST(Config, DerivesTheGdnValueHeadDimFromInnerSize) {
  TinyQwen35 model;
  model.gdn_v_dim = 64;  // k-head dim stays 32
  model.make();
  const Config c = read(model);
  EXPECT_EQ(c.gdn_k_head_dim, 32);
  EXPECT_EQ(c.gdn_v_head_dim, 64);
  EXPECT_EQ(c.gdn_conv_channels(), 2 * 2 * 32 + 4 * 64);
}

TEST(Config, ValueLengthDefaultsToKeyLength) {
  TinyQwen35 model = tiny();
  model.erase("qwen35.attention.value_length");
  EXPECT_EQ(read(model).value_dim, 64);
}

TEST(Config, AcceptsAnyIntegerWidth) {
  TinyQwen35 model = tiny();
  model.set("qwen35.embedding_length", Value::u64(256));
  model.set("qwen35.block_count", Value::i32(4));
  model.set("qwen35.ssm.conv_kernel", Value::u8(4));
  model.set("qwen35.attention.layer_norm_rms_epsilon", Value::f64(1e-5));
  const Config c = read(model);
  EXPECT_EQ(c.d_model, 256);
  EXPECT_EQ(c.n_layer, 4);
  EXPECT_EQ(c.conv_kernel, 4);
  EXPECT_DOUBLE_EQ(c.rms_eps, 1e-5);
}

TEST(Config, RecurrentLayersArrayOverridesTheInterval) {
  // Layer 0 becomes attention and layer 3 GDN; the shape checks follow the override.
  for (const Value& flags :
       {Value::array(gguf::ValueType::kBool, {Value::boolean(false), Value::boolean(true),
                                              Value::boolean(true), Value::boolean(true)}),
        Value::i32_array({0, 1, 1, 5})}) {
    TinyQwen35 model;
    model.attention_layers = {0};
    model.make();
    model.set("qwen35.attention.recurrent_layers", flags);
    const Config c = read(model);
    EXPECT_EQ(c.layers, (std::vector<LayerKind>{G::kFullAttention, G::kGatedDeltaNet, G::kGatedDeltaNet,
                                                G::kGatedDeltaNet}));
  }
}

TEST(Config, SubtractsNextNPredictLayers) {
  TinyQwen35 model = tiny();
  model.set("qwen35.block_count", Value::u32(5));  // a fifth (MTP) block whose tensors are not read
  model.set("qwen35.nextn_predict_layers", Value::u32(1));
  EXPECT_EQ(read(model).n_layer, 4);
}

struct Refusal {
  std::string name;
  std::function<void(TinyQwen35&)> mutate;
  std::string expected_in_message;
};

void PrintTo(const Refusal& refusal, std::ostream* os) {
  *os << refusal.name;
}

class ConfigRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(ConfigRefusal, NamesTheKeyOrTensor) {
  TinyQwen35 model = tiny();
  GetParam().mutate(model);
  try {
    read(model);
    ADD_FAILURE() << "config accepted; expected a refusal naming " << GetParam().expected_in_message;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConfig) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(GetParam().expected_in_message));
    EXPECT_THAT(e.what(), HasSubstr("model.gguf"));
  }
}

const Refusal kRefusals[] = {
    {"UnknownArchitecture", [](TinyQwen35& m) { m.set("general.architecture", Value::string("llama")); },
     "unknown architecture 'llama'"},
    {"MissingKey", [](TinyQwen35& m) { m.erase("qwen35.ssm.inner_size"); }, "qwen35.ssm.inner_size"},
    {"MissingEmbeddingLength", [](TinyQwen35& m) { m.erase("qwen35.embedding_length"); },
     "qwen35.embedding_length"},
    {"FloatWhereIntegerExpected", [](TinyQwen35& m) { m.set("qwen35.block_count", Value::f32(4.0f)); },
     "qwen35.block_count"},
    {"ZeroDimension", [](TinyQwen35& m) { m.set("qwen35.feed_forward_length", Value::u32(0)); },
     "qwen35.feed_forward_length"},
    {"OddRopeDim", [](TinyQwen35& m) { m.set("qwen35.rope.dimension_count", Value::u32(31)); },
     "qwen35.rope.dimension_count"},
    {"RopeDimAboveHeadDim", [](TinyQwen35& m) { m.set("qwen35.rope.dimension_count", Value::u32(128)); },
     "qwen35.rope.dimension_count"},
    {"HeadsNotDivisibleByKvHeads",
     [](TinyQwen35& m) { m.set("qwen35.attention.head_count_kv", Value::u32(3)); },
     "qwen35.attention.head_count_kv"},
    {"ValueHeadsNotDivisibleByKeyHeads",
     [](TinyQwen35& m) { m.set("qwen35.ssm.group_count", Value::u32(3)); }, "qwen35.ssm.group_count"},
    {"NextNNotBelowBlockCount", [](TinyQwen35& m) { m.set("qwen35.nextn_predict_layers", Value::u32(4)); },
     "qwen35.nextn_predict_layers"},
    {"RecurrentLayersWrongLength",
     [](TinyQwen35& m) {
       m.set("qwen35.attention.recurrent_layers", Value::i32_array({1, 1, 0}));
     },
     "qwen35.attention.recurrent_layers"},
    {"RecurrentLayersStrings",
     [](TinyQwen35& m) {
       m.set("qwen35.attention.recurrent_layers", Value::string_array({"a", "b", "c", "d"}));
     },
     "qwen35.attention.recurrent_layers"},
    {"MissingTensor", [](TinyQwen35& m) { m.erase_tensor("blk.2.ssm_conv1d.weight"); },
     "tensor blk.2.ssm_conv1d.weight is missing"},
    {"WrongQkvShape",
     [](TinyQwen35& m) {
       m.tensor("blk.0.attn_qkv.weight").ne = {256, 384};
     },
     "tensor blk.0.attn_qkv.weight has shape [256, 384], expected [256, 256]"},
    {"WrongAttnQShape",
     [](TinyQwen35& m) {
       m.tensor("blk.3.attn_q.weight").ne = {256, 128};
     },
     "tensor blk.3.attn_q.weight has shape [256, 128], expected [256, 256]"},
    {"WrongSsmAShape",
     [](TinyQwen35& m) {
       m.tensor("blk.1.ssm_a").ne = {4, 1};
     },
     "tensor blk.1.ssm_a has shape [4, 1], expected [4]"},
    {"WrongNormShape", [](TinyQwen35& m) { m.tensor("blk.3.attn_k_norm.weight").ne = {32}; },
     "tensor blk.3.attn_k_norm.weight has shape [32], expected [64]"},
    {"OutputVocabMismatch",
     [](TinyQwen35& m) {
       m.tensor("output.weight").ne = {256, 32};
     },
     "tensor output.weight has shape [256, 32], expected [256, 64]"},
    {"RmsEpsilonInfinite",
     [](TinyQwen35& m) { m.set("qwen35.attention.layer_norm_rms_epsilon", Value::f32(INFINITY)); },
     "qwen35.attention.layer_norm_rms_epsilon: inf is not in (0, 1)"},
    {"RopeBaseInfinite", [](TinyQwen35& m) { m.set("qwen35.rope.freq_base", Value::f32(INFINITY)); },
     "qwen35.rope.freq_base: inf is not a positive finite number"},
    {"RopeBaseNotANumber", [](TinyQwen35& m) { m.set("qwen35.rope.freq_base", Value::f32(NAN)); },
     "qwen35.rope.freq_base: nan is not a positive finite number"},
    {"InnerSizeDisagreesWithTensors", [](TinyQwen35& m) { m.set("qwen35.ssm.inner_size", Value::u32(256)); },
     "blk.0.attn_qkv.weight"},
};

INSTANTIATE_TEST_SUITE_P(Rules, ConfigRefusal, ::testing::ValuesIn(kRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& param) { return param.param.name; });

}  // namespace
}  // namespace tern::model
