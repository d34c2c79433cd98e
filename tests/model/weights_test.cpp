#include "model/weights.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/half.h"
#include "kernels/ref/matmul.h"
#include "model/gdn_order.h"
#include "model/model.h"
#include "quant/types.h"
#include "tests/model/tiny_model.h"

namespace tern::model {
namespace {

std::vector<float> stored_f32(const gguf::Reader& file, const std::string& name) {
  const gguf::TensorInfo& t = file.tensor(name);
  EXPECT_EQ(t.type, quant::TensorType::kF32) << name;
  std::vector<float> v(static_cast<size_t>(t.elements()));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
  return v;
}

class WeightBinding : public testing::Test {
 protected:
  void SetUp() override { model = Model::open(testing_support::tiny_pq2_model()); }
  const LayerWeights& first(LayerKind kind) const {
    for (const LayerWeights& l : model->weights().layers) {
      if (l.kind == kind) return l;
    }
    throw std::runtime_error("no layer of that kind");
  }
  std::string name(const LayerWeights& l, const char* suffix) const {
    const auto& layers = model->weights().layers;
    return "blk." + std::to_string(&l - layers.data()) + "." + suffix;
  }
  std::unique_ptr<const Model> model;
};

TEST_F(WeightBinding, GeometrySeesLayoutBugs) {
  const Config& c = model->config();
  EXPECT_GE(c.gdn_n_k, 2);  // model-spec §11.1
  EXPECT_GE(c.gdn_n_v / c.gdn_n_k, 2);
  EXPECT_GT(c.n_attention_layers(), 0);
  EXPECT_LT(c.n_attention_layers(), c.n_layer);
  EXPECT_TRUE(model->sites().enabled);
  EXPECT_TRUE(model->weights().ssm_out_grouped);
}

TEST_F(WeightBinding, NormGainsAreReadAsStored) {
  const gguf::Reader& file = model->file();
  const LayerWeights& attn = first(LayerKind::kFullAttention);
  const LayerWeights& gdn = first(LayerKind::kGatedDeltaNet);
  EXPECT_EQ(model->weights().output_norm, stored_f32(file, "output_norm.weight"));
  EXPECT_EQ(attn.attn_norm, stored_f32(file, name(attn, "attn_norm.weight")));
  EXPECT_EQ(attn.post_attention_norm, stored_f32(file, name(attn, "post_attention_norm.weight")));
  EXPECT_EQ(attn.attention.q_norm, stored_f32(file, name(attn, "attn_q_norm.weight")));
  EXPECT_EQ(attn.attention.k_norm, stored_f32(file, name(attn, "attn_k_norm.weight")));
  EXPECT_EQ(gdn.gdn.norm, stored_f32(file, name(gdn, "ssm_norm.weight")));
}

TEST_F(WeightBinding, SsmAIsUsedDirectlyAndPerHeadTensorsAreUntiled) {
  const Config& c = model->config();
  const LayerWeights& gdn = first(LayerKind::kGatedDeltaNet);
  const std::vector<float> a = stored_f32(model->file(), name(gdn, "ssm_a"));
  const std::vector<float> dt = stored_f32(model->file(), name(gdn, "ssm_dt.bias"));
  const std::vector<float> conv = stored_f32(model->file(), name(gdn, "ssm_conv1d.weight"));
  const int64_t rep = c.gdn_n_v / c.gdn_n_k;
  const int64_t qk = 2 * c.gdn_n_k * c.gdn_k_head_dim;
  const int64_t taps = c.conv_kernel;
  for (int64_t g = 0; g < c.gdn_n_v; ++g) {
    const int64_t j = tiled_slot_of_grouped(g, c.gdn_n_k, rep);
    EXPECT_EQ(gdn.gdn.a[g], a[j]) << g;  // −exp(A_log) as stored: no second exp, no sign flip
    EXPECT_LT(gdn.gdn.a[g], 0.0f);
    EXPECT_EQ(gdn.gdn.dt_bias[g], dt[j]) << g;
    for (int64_t i = 0; i < c.gdn_v_head_dim * taps; ++i) {
      EXPECT_EQ(gdn.gdn.conv[(qk + g * c.gdn_v_head_dim) * taps + i],
                conv[(qk + j * c.gdn_v_head_dim) * taps + i]);
    }
  }
  for (int64_t i = 0; i < qk * taps; ++i) EXPECT_EQ(gdn.gdn.conv[i], conv[i]);  // q/k channels untouched
}

TEST_F(WeightBinding, Bf16ProjectionsAreExactAndUnfolded) {
  const LayerWeights& gdn = first(LayerKind::kGatedDeltaNet);
  const kernels::MatrixView& alpha = gdn.gdn.alpha;
  ASSERT_EQ(alpha.type, quant::TensorType::kBF16);
  EXPECT_FALSE(model->contract()->is_folded(name(gdn, "ssm_alpha.weight")));
  EXPECT_FALSE(model->contract()->is_folded(name(gdn, "ssm_beta.weight")));
  std::vector<float> unit(static_cast<size_t>(alpha.cols), 0.0f);
  for (int64_t k : {int64_t{0}, alpha.cols / 2 + 1, alpha.cols - 1}) {
    unit[k] = 1.0f;
    for (int64_t r = 0; r < alpha.rows; ++r) {
      uint16_t bits;
      std::memcpy(&bits, alpha.row(r) + 2 * k, 2);
      EXPECT_EQ(kernels::ref::dot_row(alpha, r, unit.data()), bf16_to_fp32(bits));
    }
    unit[k] = 0.0f;
  }
}

TEST_F(WeightBinding, HugePagePlacementCopiesEveryMatrixButTheEmbeddingExactly) {
  // Byte-for-byte copies are the rows form; panels are tested in pq2_form_test.cpp.
  model = Model::open(testing_support::tiny_pq2_model(), {.pq2_form = Pq2Form::kRows});
  const gguf::Reader& file = model->file();
  const LayerWeights& attn = first(LayerKind::kFullAttention);
  const LayerWeights& gdn = first(LayerKind::kGatedDeltaNet);
  for (const auto& [view, tensor] : {std::pair{&attn.attention.q, name(attn, "attn_q.weight")},
                                     std::pair{&gdn.gdn.qkv, name(gdn, "attn_qkv.weight")},
                                     std::pair{&gdn.ffn_down, name(gdn, "ffn_down.weight")},
                                     std::pair{&model->weights().output, std::string("output.weight")}}) {
    const std::span<const uint8_t> stored = file.tensor(tensor).data;
    EXPECT_NE(view->data, stored.data()) << tensor;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view->data) % 64, 0u) << tensor;
    ASSERT_EQ(view->row_bytes * static_cast<size_t>(view->rows), stored.size()) << tensor;
    EXPECT_EQ(std::memcmp(view->data, stored.data(), stored.size()), 0) << tensor;
  }
  EXPECT_EQ(model->weights().token_embd.data, file.tensor("token_embd.weight").data.data());
  EXPECT_EQ(model->weights().output.type, quant::TensorType::kPQ2_0);
}

TEST_F(WeightBinding, MappedPlacementViewsTheFile) {
  const auto mapped = Model::open(testing_support::tiny_pq2_model(), {.placement = WeightPlacement::kMapped});
  const LayerWeights& attn = first(LayerKind::kFullAttention);
  const auto layer = static_cast<size_t>(&attn - model->weights().layers.data());
  EXPECT_EQ(mapped->weights().layers[layer].attention.q.data,
            mapped->file().tensor(name(attn, "attn_q.weight")).data.data());
  EXPECT_EQ(mapped->weights().token_embd.data, mapped->file().tensor("token_embd.weight").data.data());
}

// What a token reads from the mapping: every matrix (the PQ2_0 and bf16 tensors; f32 ones are norms and
// conv taps) but the embedding, as this model's head is its own; none once copied out.
TEST_F(WeightBinding, MappedMatrixBytesAreTheMatricesLeftInTheFile) {
  const auto mapped = Model::open(testing_support::tiny_pq2_model(), {.placement = WeightPlacement::kMapped});
  ASSERT_NE(mapped->file().find_tensor("output.weight"), nullptr);
  uint64_t matrices = 0;
  for (const gguf::TensorInfo& tensor : mapped->file().tensors()) {
    if (tensor.type != quant::TensorType::kF32 && tensor.name != "token_embd.weight")
      matrices += tensor.nbytes;
  }
  EXPECT_EQ(mapped->mapped_matrix_bytes(), matrices);
  EXPECT_EQ(model->mapped_matrix_bytes(), 0u);
}

// The PTQ1_0 re-pack at load is split over threads by rows (trit panels: by panels); the placed bytes
// must not depend on how.
TEST(WeightBindingPtq1, RePackGivesTheSameBytesOnAnyThreadCount) {
  const auto placed_bytes = [](const Model& m) {
    std::vector<uint8_t> bytes;
    for (const LayerWeights& layer : m.weights().layers) {
      for (const kernels::MatrixView* view :
           {&layer.ffn_down, &layer.ffn_gate, &layer.gdn.qkv, &layer.attention.q}) {
        if (view->data == nullptr) continue;
        bytes.insert(bytes.end(), view->data,
                     view->data + *quant::matrix_bytes(view->type, view->rows, view->cols));
      }
    }
    return bytes;
  };
  for (const Ptq1Form form :
       {Ptq1Form::kTritPanels, Ptq1Form::kTritPlanes, Ptq1Form::kTritRows, Ptq1Form::kPq2_0}) {
    const auto one = Model::open(testing_support::tiny_ptq1_model(), {.ptq1_form = form, .threads = 1});
    const std::vector<uint8_t> expected = placed_bytes(*one);
    ASSERT_FALSE(expected.empty());
    for (int threads : {2, 3, 7}) {
      const auto many =
          Model::open(testing_support::tiny_ptq1_model(), {.ptq1_form = form, .threads = threads});
      EXPECT_EQ(placed_bytes(*many), expected) << threads << " threads";
    }
  }
}

TEST(WeightBindingDense, DenseFileHasNoSitesAndTiledSsmOut) {
  const auto dense = Model::open(testing_support::tiny_dense_model());
  EXPECT_EQ(dense->contract(), nullptr);
  EXPECT_FALSE(dense->sites().enabled);
  EXPECT_FALSE(dense->weights().ssm_out_grouped);
  EXPECT_EQ(dense->weights().output.type, quant::TensorType::kF32);
}

}  // namespace
}  // namespace tern::model
