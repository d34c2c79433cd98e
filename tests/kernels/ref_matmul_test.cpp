#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"
#include "kernels/ref/embedding.h"
#include "kernels/ref/matmul.h"
#include "quant/codec.h"

namespace tern::kernels::ref {
namespace {

using quant::TensorType;

struct Encoded {
  std::vector<uint8_t> bytes;
  MatrixView view;
  std::vector<float> dense;  // what the bytes decode to, [rows][cols]
};

// Random rows encoded in `type`: ternary types get asymmetric codes (0..2 with unequal
// frequencies) and one fp16 scale per block; float types get normal values. `dense` is what the
// stored bytes decode to.
Encoded make_matrix(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::discrete_distribution<int> code({0.4, 0.25, 0.35});
  std::uniform_real_distribution<float> scale(0.01f, 0.05f);
  std::normal_distribution<float> normal;
  Encoded e;
  e.dense.resize(rows * cols);
  const int64_t block = quant::traits(type).block_elems;
  for (int64_t i = 0; i < rows * cols; i += block) {
    const float d = fp16_to_fp32(fp32_to_fp16(scale(rng)));
    for (int64_t j = i; j < i + block; ++j) {
      e.dense[j] = quant::is_ternary(type) ? static_cast<float>(code(rng) - 1) * d : normal(rng);
    }
  }
  const size_t row_bytes = *quant::row_bytes(type, cols);
  e.bytes.resize(row_bytes * rows);
  for (int64_t r = 0; r < rows; ++r) {
    quant::quantize_row(type, &e.dense[r * cols], &e.bytes[r * row_bytes], cols);
    quant::dequantize_row(type, &e.bytes[r * row_bytes], &e.dense[r * cols], cols);
  }
  e.view = MatrixView{type, e.bytes.data(), cols, rows, row_bytes};
  return e;
}

class RefMatmul : public testing::TestWithParam<TensorType> {};

TEST_P(RefMatmul, EqualsDotWithDecodedRows) {
  const int64_t rows = 7, cols = 384, tokens = 3;
  const Encoded w = make_matrix(GetParam(), rows, cols, 11);
  std::mt19937 rng(12);
  std::normal_distribution<float> normal;
  std::vector<float> x(tokens * cols), y(tokens * rows);
  for (float& v : x) v = normal(rng);
  matmul(y.data(), w.view, x.data(), tokens);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double expect = 0;
      for (int64_t k = 0; k < cols; ++k) expect += double(w.dense[r * cols + k]) * x[t * cols + k];
      EXPECT_NEAR(y[t * rows + r], expect, 1e-6 * (1 + std::abs(expect))) << t << "," << r;
    }
  }
}

TEST_P(RefMatmul, EmbeddingGathersTheDecodedRow) {
  const Encoded table = make_matrix(GetParam(), 5, 256, 13);
  const int32_t ids[] = {4, 0, 4, 2};
  std::vector<float> out(4 * 256);
  embedding(out.data(), table.view, ids, 4);
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 256; ++k) EXPECT_EQ(out[t * 256 + k], table.dense[ids[t] * 256 + k]);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, RefMatmul,
                         testing::Values(TensorType::kPQ2_0, TensorType::kPTQ1_0, TensorType::kTritPlanes,
                                         TensorType::kQ2_0, TensorType::kF32, TensorType::kF16,
                                         TensorType::kBF16),
                         [](const auto& param_info) {
                           return std::string(quant::traits(param_info.param).name);
                         });

TEST(RefMatmulPq2, CodeThreeIsPlusTwoD) {
  uint8_t codes[128];
  for (int j = 0; j < 128; ++j) codes[j] = static_cast<uint8_t>(j % 4);
  uint8_t block[34];
  quant::pq2_pack(codes, fp32_to_fp16(0.5f), block);
  const MatrixView w{TensorType::kPQ2_0, block, 128, 1, 34};
  std::vector<float> x(128, 0.0f);
  x[3] = 1.0f;    // code 3
  x[2] = 10.0f;   // code 2
  x[0] = 100.0f;  // code 0
  float y;
  matmul(&y, w, x.data(), 1);
  EXPECT_FLOAT_EQ(y, 2 * 0.5f * 1.0f + 0.5f * 10.0f - 0.5f * 100.0f);
}

TEST(RefMatmulPtq1, ReadsTheStagedElementOrder) {
  uint8_t trits[128];
  for (int j = 0; j < 128; ++j) trits[j] = 1;
  trits[81] = 2;  // element 81 lives in qs[17], trit 0 (§3.4): a positional decoder would misplace it
  uint8_t block[28];
  quant::ptq1_pack(trits, fp32_to_fp16(0.25f), block);
  const MatrixView w{TensorType::kPTQ1_0, block, 128, 1, 28};
  std::vector<float> x(128);
  for (int j = 0; j < 128; ++j) x[j] = static_cast<float>(j);
  float y;
  matmul(&y, w, x.data(), 1);
  EXPECT_FLOAT_EQ(y, 0.25f * 81.0f);
}

}  // namespace
}  // namespace tern::kernels::ref
