#include "hadamard/contract.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "core/error.h"
#include "gguf/reader.h"
#include "tests/support/tiny_qwen35.h"

namespace tern::hadamard {
namespace {

using gguf::Value;
using ::testing::HasSubstr;
using testing::TinyQwen35;

std::optional<Contract> read(const TinyQwen35& model) {
  const testing::TempFile file("model.gguf");
  model.write(file.path());
  return read_contract(gguf::Reader::open(file.path()));
}

// Reads the contract of `model` and expects Error(kContract) naming `what` and the file.
void expect_refused(const TinyQwen35& model, const std::string& what) {
  try {
    read(model);
    ADD_FAILURE() << "contract accepted; expected a refusal naming " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kContract) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(what));
    EXPECT_THAT(e.what(), HasSubstr("model.gguf"));
  }
}

TEST(Contract, ReadsTheTinyModelContract) {
  TinyQwen35 model;
  model.make();
  const std::optional<Contract> c = read(model);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->version, 1u);
  EXPECT_EQ(c->block_size, 64);
  EXPECT_TRUE(c->explicit_signs);
  EXPECT_EQ(c->sign_widths, (std::vector<int64_t>{256, 128, 512}));
  const std::vector<int32_t> written = [&] {
    std::vector<int32_t> v;
    for (const Value& x : std::get<gguf::Array>(model.find("prism.hadamard.sign_values")->data).items) {
      v.push_back(static_cast<int32_t>(std::get<int64_t>(x.data)));
    }
    return v;
  }();
  // signs_for(128) is the slice after the 256 vector, in file order.
  const std::span<const float> s128 = c->signs_for(128);
  ASSERT_EQ(s128.size(), 128u);
  for (size_t i = 0; i < s128.size(); ++i) ASSERT_EQ(s128[i], static_cast<float>(written[256 + i])) << i;
  EXPECT_EQ(c->weight_names.size(), model.weight_names().size());
  EXPECT_TRUE(c->is_folded("blk.0.attn_qkv.weight"));
  EXPECT_FALSE(c->is_folded("token_embd.weight"));
  EXPECT_TRUE(c->is_inverse("token_embd.weight"));
  EXPECT_TRUE(c->gdn_v_grouped);
  EXPECT_THROW(c->signs_for(1024), Error);
}

TEST(Contract, IdentityModeHasNoSigns) {
  TinyQwen35 model;
  model.make();
  model.set("prism.hadamard.sign_mode", Value::string("identity"));
  model.erase("prism.hadamard.sign_widths");
  model.erase("prism.hadamard.sign_values");
  const std::optional<Contract> c = read(model);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->explicit_signs);
  EXPECT_TRUE(c->signs_for(256).empty());
}

TEST(Contract, DenseFileHasNone) {
  TinyQwen35 model;
  model.make();
  for (auto& [key, value] : std::vector(model.metadata)) {
    if (key.starts_with("prism.hadamard.")) model.erase(key);
  }
  for (TinyQwen35::Tensor& t : model.tensors) {
    if (quant::is_ternary(t.type)) t.type = quant::TensorType::kF32;
  }
  EXPECT_FALSE(read(model).has_value());
}

TEST(Contract, AcceptsAnyIntegerWidthForIntegerKeys) {
  TinyQwen35 model;
  model.make();
  model.set("prism.hadamard.version", Value::u8(1));
  model.set("prism.hadamard.block_size", Value::i64(64));
  EXPECT_EQ(read(model)->block_size, 64);
}

struct Refusal {
  std::string name;
  std::function<void(TinyQwen35&)> mutate;
  std::string expected_in_message;
};

void PrintTo(const Refusal& refusal, std::ostream* os) {
  *os << refusal.name;
}

class ContractRefusal : public ::testing::TestWithParam<Refusal> {};

TEST_P(ContractRefusal, NamesTheKeyOrTensor) {
  TinyQwen35 model;
  model.make();
  GetParam().mutate(model);
  expect_refused(model, GetParam().expected_in_message);
}

void replace_name(TinyQwen35& m, const std::string& from, const std::string& to) {
  std::vector<std::string> names = m.weight_names();
  std::ranges::replace(names, from, to);
  m.set_weight_names(names);
}

void remove_name(TinyQwen35& m, const std::string& name) {
  std::vector<std::string> names = m.weight_names();
  std::erase(names, name);
  m.set_weight_names(names);
}

void to_identity_mode(TinyQwen35& m) {
  m.set("prism.hadamard.sign_mode", Value::string("identity"));
  m.erase("prism.hadamard.sign_widths");
  m.erase("prism.hadamard.sign_values");
}

std::vector<int32_t> ones(size_t n) {
  return std::vector<int32_t>(n, 1);
}

const Refusal kRefusals[] = {
    // Rule 1: folded-looking file without a version.
    {"TernaryTensorsWithoutVersion",
     [](TinyQwen35& m) {
       for (auto& [key, value] : std::vector(m.metadata)) {
         if (key.starts_with("prism.hadamard.")) m.erase(key);
       }
     },
     "prism.hadamard.version"},
    {"HadamardKeyWithoutVersion", [](TinyQwen35& m) { m.erase("prism.hadamard.version"); },
     "prism.hadamard.block_size"},
    // Rule 2.
    {"VersionTwo", [](TinyQwen35& m) { m.set("prism.hadamard.version", Value::u32(2)); },
     "prism.hadamard.version"},
    {"VersionNotInteger", [](TinyQwen35& m) { m.set("prism.hadamard.version", Value::string("1")); },
     "prism.hadamard.version"},
    // Rule 3.
    {"BlockSizeNotPowerOfTwo", [](TinyQwen35& m) { m.set("prism.hadamard.block_size", Value::u32(48)); },
     "prism.hadamard.block_size"},
    {"BlockSizeZero", [](TinyQwen35& m) { m.set("prism.hadamard.block_size", Value::u32(0)); },
     "prism.hadamard.block_size"},
    {"BlockSizeNegative", [](TinyQwen35& m) { m.set("prism.hadamard.block_size", Value::i32(-64)); },
     "prism.hadamard.block_size"},
    {"BlockSizeMissing", [](TinyQwen35& m) { m.erase("prism.hadamard.block_size"); },
     "prism.hadamard.block_size"},
    {"BlockSizeDoesNotDivideAWeight",
     [](TinyQwen35& m) {
       to_identity_mode(m);
       m.set("prism.hadamard.block_size", Value::u32(256));
     },
     "tensor blk.0.ssm_out.weight has input width 128, not a multiple of block_size 256"},
    // Rule 4.
    {"UnknownTransform",
     [](TinyQwen35& m) { m.set("prism.hadamard.transform", Value::string("randomized-hadamard")); },
     "prism.hadamard.transform"},
    {"UnknownAxis",
     [](TinyQwen35& m) { m.set("prism.hadamard.axis", Value::string("output-first-dimension")); },
     "prism.hadamard.axis"},
    {"AxisMissing", [](TinyQwen35& m) { m.erase("prism.hadamard.axis"); }, "prism.hadamard.axis"},
    // Rule 5.
    {"UnknownSignMode", [](TinyQwen35& m) { m.set("prism.hadamard.sign_mode", Value::string("random")); },
     "prism.hadamard.sign_mode"},
    {"IdentityWithSignWidths",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.sign_mode", Value::string("identity"));
       m.erase("prism.hadamard.sign_values");
     },
     "prism.hadamard.sign_widths"},
    {"IdentityWithSignValues",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.sign_mode", Value::string("identity"));
       m.erase("prism.hadamard.sign_widths");
     },
     "prism.hadamard.sign_values"},
    // Rule 6.
    {"SignWidthsMissing", [](TinyQwen35& m) { m.erase("prism.hadamard.sign_widths"); },
     "prism.hadamard.sign_widths"},
    {"SignWidthsEmpty", [](TinyQwen35& m) { m.set("prism.hadamard.sign_widths", Value::i32_array({})); },
     "prism.hadamard.sign_widths"},
    {"SignWidthNotMultipleOfBlock",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.sign_widths", Value::i32_array({256, 100, 540}));
     },
     "prism.hadamard.sign_widths"},
    {"SignWidthRepeated",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.sign_widths", Value::i32_array({256, 128, 128, 384}));
     },
     "prism.hadamard.sign_widths: width 128 is listed twice"},
    {"SignWidthNotInteger",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.sign_widths", Value::string_array({"256", "128", "512"}));
     },
     "prism.hadamard.sign_widths"},
    {"SignValueNotPlusMinusOne",
     [](TinyQwen35& m) {
       std::vector<int32_t> v = ones(896);
       v[300] = 0;
       m.set("prism.hadamard.sign_values", Value::i32_array(v));
     },
     "prism.hadamard.sign_values: value 0 at index 300"},
    {"SignValuesTooFew",
     [](TinyQwen35& m) { m.set("prism.hadamard.sign_values", Value::i32_array(ones(895))); },
     "prism.hadamard.sign_values"},
    {"SignValuesTooMany",
     [](TinyQwen35& m) { m.set("prism.hadamard.sign_values", Value::i32_array(ones(897))); },
     "prism.hadamard.sign_values"},
    {"SignValuesMissing", [](TinyQwen35& m) { m.erase("prism.hadamard.sign_values"); },
     "prism.hadamard.sign_values"},
    // Rule 7.
    {"WeightNamesMissing", [](TinyQwen35& m) { m.erase("prism.hadamard.weight_names"); },
     "prism.hadamard.weight_names"},
    {"WeightNamesEmpty", [](TinyQwen35& m) { m.set_weight_names({}); }, "prism.hadamard.weight_names"},
    {"WeightNameTwice",
     [](TinyQwen35& m) {
       std::vector<std::string> names = m.weight_names();
       names.push_back(names.front());
       m.set_weight_names(names);
     },
     "prism.hadamard.weight_names: 'blk.0.attn_qkv.weight' is listed twice"},
    {"WeightNameNotFoldable",
     [](TinyQwen35& m) { replace_name(m, "blk.0.ffn_up.weight", "blk.0.ssm_alpha.weight"); },
     "'blk.0.ssm_alpha.weight' is not a foldable weight name"},
    {"WeightNameBadLayerNumber",
     [](TinyQwen35& m) { replace_name(m, "blk.0.ffn_up.weight", "blk.x.ffn_up.weight"); },
     "'blk.x.ffn_up.weight' is not a foldable weight name"},
    {"WeightNamesNotStrings",
     [](TinyQwen35& m) { m.set("prism.hadamard.weight_names", Value::i32_array({1})); },
     "prism.hadamard.weight_names"},
    // Rule 8.
    {"InverseNotTheEmbedding",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.inverse_weight_names",
             Value::string_array({"token_embd.weight", "output.weight"}));
     },
     "prism.hadamard.inverse_weight_names: 'output.weight' is not allowed"},
    {"InverseTwice",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.inverse_weight_names",
             Value::string_array({"token_embd.weight", "token_embd.weight"}));
     },
     "prism.hadamard.inverse_weight_names: 'token_embd.weight' is listed twice"},
    // Rule 9.
    {"NamedTensorMissing",
     [](TinyQwen35& m) {
       std::vector<std::string> names = m.weight_names();
       names.push_back("blk.9.ffn_up.weight");
       m.set_weight_names(names);
     },
     "blk.9.ffn_up.weight, which is not in the file"},
    {"NamedTensorNot2D",
     [](TinyQwen35& m) {
       m.tensor("blk.0.ffn_up.weight").ne = {256, 256, 2};
     },
     "tensor blk.0.ffn_up.weight has 3 dimensions"},
    {"NoSignVectorForWidth",
     [](TinyQwen35& m) {
       m.set("prism.hadamard.sign_widths", Value::i32_array({256, 512}));
       m.set("prism.hadamard.sign_values", Value::i32_array(ones(768)));
     },
     "prism.hadamard.sign_widths: has no sign vector for width 128"},
    // Rule 10.
    {"GdnVGroupedNotBool", [](TinyQwen35& m) { m.set("prism.hadamard.gdn_v_grouped", Value::u8(1)); },
     "prism.hadamard.gdn_v_grouped"},
    // Rule 11.
    {"ArchitectureNotQwen35", [](TinyQwen35& m) { m.set("general.architecture", Value::string("llama")); },
     "general.architecture"},
    // Rule 12.
    {"NoOutputWeight",
     [](TinyQwen35& m) {
       remove_name(m, "output.weight");
       m.erase_tensor("output.weight");
     },
     "output.weight is required"},
    // Rule 13.
    {"FloatFoldedWeight",
     [](TinyQwen35& m) { m.tensor("blk.0.ffn_up.weight").type = quant::TensorType::kF32; },
     "tensor blk.0.ffn_up.weight has type f32, a folded weight must be ternary"},
    {"TernaryTensorUnlisted", [](TinyQwen35& m) { remove_name(m, "blk.1.ffn_down.weight"); },
     "ternary tensor blk.1.ffn_down.weight is in neither"},
    {"EmbeddingUnlisted", [](TinyQwen35& m) { m.erase("prism.hadamard.inverse_weight_names"); },
     "ternary tensor token_embd.weight is in neither"},
    // Unknown keys could change the meaning of the fold (e.g. a version-2 tied_output).
    {"UnknownKey", [](TinyQwen35& m) { m.set("prism.hadamard.tied_output", Value::boolean(true)); },
     "prism.hadamard.tied_output"},
};

INSTANTIATE_TEST_SUITE_P(Rules, ContractRefusal, ::testing::ValuesIn(kRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& param) { return param.param.name; });

}  // namespace
}  // namespace tern::hadamard
