// The oracle on PQ2_0 panels (quant/pq2_panels.h) computes exactly what it computes on the PQ2_0 rows: the
// model's logits then do not depend on the form its matrices were placed in.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/half.h"
#include "kernels/ref/matmul.h"
#include "quant/codec.h"
#include "quant/pq2_panels.h"

namespace tern::kernels::ref {
namespace {

using quant::TensorType;

struct TwoForms {
  std::vector<uint8_t> rows_bytes, panel_bytes;
  MatrixView rows, panels;
};

// Random bytes are PQ2_0 codes of every value, code 3 included; the scales are drawn as fp16 of moderate
// size so the dot products stay finite and every output is compared, not NaN against NaN.
TwoForms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(-0.1f, 0.1f);
  const size_t row_bytes = *quant::row_bytes(TensorType::kPQ2_0, cols);
  TwoForms m;
  m.rows_bytes.resize(row_bytes * static_cast<size_t>(rows));
  for (size_t i = 0; i < m.rows_bytes.size(); ++i) {
    if (i % quant::kPq2Bytes == 0) {
      const uint16_t d = fp32_to_fp16(scale(rng));
      m.rows_bytes[i] = static_cast<uint8_t>(d & 0xff);
      m.rows_bytes[i + 1] = static_cast<uint8_t>(d >> 8);
      ++i;
    } else {
      m.rows_bytes[i] = static_cast<uint8_t>(rng());
    }
  }
  m.panel_bytes.resize(quant::pq2_panels_bytes(rows, cols));
  quant::pack_pq2_panels(m.rows_bytes.data(), row_bytes, rows, cols, m.panel_bytes.data());
  m.rows = MatrixView{TensorType::kPQ2_0, m.rows_bytes.data(), cols, rows, row_bytes};
  m.panels = MatrixView{TensorType::kPq2Panels, m.panel_bytes.data(), cols, rows, row_bytes};
  return m;
}

std::vector<float> random_acts(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  return x;
}

TEST(RefPq2Panels, MatmulEqualsTheRowsFormBitForBit) {
  for (const int64_t cols : {128, 640, 5120}) {
    for (const int64_t rows : {1, 17, 40}) {
      SCOPED_TRACE(testing::Message() << rows << " x " << cols);
      const TwoForms w = random_matrix(rows, cols, static_cast<uint32_t>(rows + cols));
      const int64_t tokens = 3;
      const std::vector<float> x = random_acts(tokens * cols, 5);
      std::vector<float> y_rows(static_cast<size_t>(tokens * rows)), y_panels(y_rows.size());
      matmul(y_rows.data(), w.rows, x.data(), tokens);
      matmul(y_panels.data(), w.panels, x.data(), tokens);
      for (size_t i = 0; i < y_rows.size(); ++i) {
        ASSERT_TRUE(std::isfinite(y_rows[i])) << i;
        EXPECT_EQ(std::bit_cast<uint32_t>(y_panels[i]), std::bit_cast<uint32_t>(y_rows[i])) << i;
      }
    }
  }
}

// The row buffer is the thread's and grows: a wide matrix after a narrow one, and the narrow one again,
// each read with no bytes left over from the other.
TEST(RefPq2Panels, DotRowEqualsTheRowsFormAcrossWidths) {
  const TwoForms narrow = random_matrix(20, 256, 1), wide = random_matrix(18, 1280, 2);
  const std::vector<float> x = random_acts(1280, 3);
  for (const TwoForms* w : {&narrow, &wide, &narrow}) {
    for (int64_t r = w->rows.rows - 1; r >= 0; --r) {
      EXPECT_EQ(std::bit_cast<uint32_t>(dot_row(w->panels, r, x.data())),
                std::bit_cast<uint32_t>(dot_row(w->rows, r, x.data())))
          << w->rows.cols << " row " << r;
    }
  }
}

}  // namespace
}  // namespace tern::kernels::ref
