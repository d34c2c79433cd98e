#include "model/fold_coverage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "gguf/reader.h"
#include "tests/support/tiny_qwen35.h"

namespace tern::model {
namespace {

using gguf::Value;
using ::testing::HasSubstr;
using testing::TinyQwen35;

void check(const TinyQwen35& model) {
  const testing::TempFile file("model.gguf");
  model.write(file.path());
  const gguf::Reader reader = gguf::Reader::open(file.path());
  const Config config = read_config(reader);
  check_contract_covers(*hadamard::read_contract(reader), config, reader);
}

void expect_refused(const TinyQwen35& model, const std::string& what) {
  try {
    check(model);
    ADD_FAILURE() << "accepted; expected a refusal naming " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kContract) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

TEST(FoldCoverage, ListsWhatTheForwardRotatesPerLayerKind) {
  Config c;
  c.layers = {LayerKind::kGatedDeltaNet, LayerKind::kFullAttention};
  EXPECT_EQ(
      folded_weight_names(c),
      (std::vector<std::string>{"blk.0.attn_qkv.weight", "blk.0.attn_gate.weight", "blk.0.ssm_out.weight",
                                "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight", "blk.0.ffn_down.weight",
                                "blk.1.attn_q.weight", "blk.1.attn_k.weight", "blk.1.attn_v.weight",
                                "blk.1.attn_output.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_up.weight",
                                "blk.1.ffn_down.weight", "output.weight"}));
}

TEST(FoldCoverage, AcceptsTheTinyModel) {
  TinyQwen35 model;
  model.make();
  EXPECT_NO_THROW(check(model));
}

TEST(FoldCoverage, RefusesAKindThatDoesNotMatchTheLayer) {
  TinyQwen35 model;
  model.make();
  model.add_tensor("blk.0.attn_q.weight", model.ternary, {256, 256});  // attn_q in a GDN layer
  std::vector<std::string> names = model.weight_names();
  names.push_back("blk.0.attn_q.weight");
  model.set_weight_names(names);
  expect_refused(model, "prism.hadamard.weight_names: lists blk.0.attn_q.weight");
}

TEST(FoldCoverage, RefusesAMissingRotatedWeight) {
  TinyQwen35 model;
  model.make();
  model.tensor("blk.1.ffn_up.weight").type = quant::TensorType::kBF16;  // unfolded float weight
  std::vector<std::string> names = model.weight_names();
  std::erase(names, "blk.1.ffn_up.weight");
  model.set_weight_names(names);
  expect_refused(model, "prism.hadamard.weight_names: missing blk.1.ffn_up.weight");
}

// model-spec §11.2: without gdn_v_grouped the ssm_out columns would be tiled, which tern does not do.
TEST(FoldCoverage, RefusesTiledGdnOutputWhenValueHeadsAreRepeated) {
  for (bool absent : {true, false}) {
    TinyQwen35 model;
    model.make();
    if (absent) {
      model.erase("prism.hadamard.gdn_v_grouped");
    } else {
      model.set("prism.hadamard.gdn_v_grouped", Value::boolean(false));
    }
    expect_refused(model, "prism.hadamard.gdn_v_grouped");
  }
}

TEST(FoldCoverage, AcceptsUngroupedWhenValueAndKeyHeadsAreEqual) {
  TinyQwen35 model;
  model.gdn_n_v = 2;
  model.gdn_v_dim = 64;  // inner stays 128
  model.make();
  model.set("prism.hadamard.gdn_v_grouped", Value::boolean(false));
  EXPECT_NO_THROW(check(model));
}

}  // namespace
}  // namespace tern::model
