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
  std::vector<DenseRowsKernel> kernels{dense_rows_scalar};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) kernels.push_back(dense_rows_avx2);
  const bool avx512 = cpu_features().has_avx2_fma() && cpu_features().avx512f;
  if (avx512) kernels.push_back(dense_rows_avx512);
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
      std::vector<std::vector<float>> by_kernel;
      for (DenseRowsKernel kernel : kernels) {
        // Rows [3, 37): a start that is not a multiple of the AVX-512 kernel's four rows, and a last group
        // of one.
        std::vector<float> y(static_cast<size_t>(rows), -1.0f);
        kernel(y.data(), w, 3, rows, x.data());
        for (int64_t r = 0; r < rows; ++r) {
          if (r < 3) {
            EXPECT_EQ(y[static_cast<size_t>(r)], -1.0f) << "row " << r << " outside the range was written";
            continue;
          }
          EXPECT_NEAR(y[static_cast<size_t>(r)], want[static_cast<size_t>(r)],
                      1e-5f * (1.0f + std::sqrt(static_cast<float>(cols))))
              << "type " << static_cast<int>(type) << " cols " << cols << " row " << r;
        }
        by_kernel.push_back(std::move(y));
      }
#if defined(__x86_64__)
      if (avx512) {  // the AVX-512 kernel adds the AVX2 kernel's chains: the same bits
        EXPECT_EQ(by_kernel.back(), by_kernel[by_kernel.size() - 2])
            << "type " << static_cast<int>(type) << " cols " << cols;
      }
#endif
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
