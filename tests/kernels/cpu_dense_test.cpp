// kernels/cpu dense matmul (the BF16/F16/F32 matrices) against the fp64-accumulating oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/dense_matmul.h"
#include "kernels/ref/matmul.h"

namespace tern::kernels::cpu {
namespace {

using quant::TensorType;

std::vector<uint8_t> random_rows(TensorType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.1f);
  const size_t width = type == TensorType::kF32 ? 4 : 2;
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * cols) * width);
  for (size_t i = 0; i < bytes.size() / width; ++i) {
    const float v = normal(rng);
    if (type == TensorType::kF32) {
      std::memcpy(&bytes[i * 4], &v, 4);
    } else {
      const uint16_t bits = type == TensorType::kF16 ? fp32_to_fp16(v) : fp32_to_bf16(v);
      std::memcpy(&bytes[i * 2], &bits, 2);
    }
  }
  return bytes;
}

TEST(CpuDenseMatmul, MatchesTheOracleForEveryTypeAndWidth) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<DenseDotKernel> kernels{dense_dot_scalar};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) kernels.push_back(dense_dot_avx2);
#endif
  ThreadPool pool(2);
  for (TensorType type : {TensorType::kBF16, TensorType::kF16, TensorType::kF32}) {
    for (int64_t cols : {1, 7, 32, 45, 5120}) {
      const int64_t rows = 37, tokens = 3;
      const std::vector<uint8_t> bytes = random_rows(type, rows, cols, rng);
      const MatrixView w{type, bytes.data(), cols, rows, bytes.size() / static_cast<size_t>(rows)};
      std::vector<float> x(static_cast<size_t>(cols * tokens));
      for (float& v : x) v = normal(rng);
      std::vector<float> want(static_cast<size_t>(rows * tokens)), got(want.size());
      ref::matmul(want.data(), w, x.data(), tokens);
      for (DenseDotKernel kernel : kernels) {
        for (int64_t r = 0; r < rows; ++r) {
          const float y = kernel(w, r, x.data());
          EXPECT_NEAR(y, want[static_cast<size_t>(r)], 1e-5f * (1.0f + std::sqrt(static_cast<float>(cols))))
              << "type " << static_cast<int>(type) << " cols " << cols << " row " << r;
        }
      }
      // Two targets in one job: the matrix, and its first 11 rows as a second matrix.
      const MatrixView first_rows{type, bytes.data(), cols, 11, w.row_bytes};
      std::vector<float> got_first(static_cast<size_t>(11 * tokens));
      const MatmulTarget targets[] = {{got.data(), w}, {got_first.data(), first_rows}};
      dense_matmul_shared(targets, x.data(), tokens, &pool);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::sqrt(static_cast<float>(cols)))) << i;
      }
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t r = 0; r < 11; ++r)
          EXPECT_EQ(got_first[static_cast<size_t>(t * 11 + r)], got[static_cast<size_t>(t * rows + r)])
              << t << r;
      }
    }
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
