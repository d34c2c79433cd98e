#include "hadamard/transform.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.h"

namespace tern::hadamard {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

std::vector<float> random_signs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> s(n);
  for (float& v : s) v = (rng() & 1u) != 0 ? 1.0f : -1.0f;
  return s;
}

// blockdiag(H_n / sqrt(n)) x in double, H_n[i][j] = (-1)^popcount(i & j).
std::vector<double> explicit_transform(const std::vector<double>& x, int64_t n) {
  std::vector<double> y(x.size(), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(n));
  for (size_t start = 0; start < x.size(); start += static_cast<size_t>(n)) {
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        const int parity = std::popcount(static_cast<uint64_t>(i & j)) & 1;
        sum += (parity != 0 ? -1.0 : 1.0) * x[start + static_cast<size_t>(j)];
      }
      y[start + static_cast<size_t>(i)] = sum * scale;
    }
  }
  return y;
}

double norm(const std::vector<float>& x) {
  double sum = 0.0;
  for (float v : x) sum += static_cast<double>(v) * v;
  return std::sqrt(sum);
}

TEST(Fwht, MatchesExplicitSylvesterMatrixForEveryPowerOfTwo) {
  for (int64_t n = 1; n <= 1024; n *= 2) {
    const std::vector<float> x = random_vector(static_cast<size_t>(n), 7u + static_cast<uint32_t>(n));
    std::vector<float> y = x;
    fwht(y.data(), n);
    const std::vector<double> expected = explicit_transform(std::vector<double>(x.begin(), x.end()), n);
    const double sqrt_n = std::sqrt(static_cast<double>(n));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(y[i], expected[i] * sqrt_n, 1e-5 * sqrt_n) << "n=" << n << " i=" << i;
    }
  }
}

TEST(HadamardForward, MatchesNormalizedMatrixForEveryPowerOfTwo) {
  for (int64_t n = 1; n <= 1024; n *= 2) {
    const std::vector<float> x = random_vector(static_cast<size_t>(2 * n), 11u + static_cast<uint32_t>(n));
    std::vector<float> y = x;
    forward(y, {}, n);
    const std::vector<double> expected = explicit_transform(std::vector<double>(x.begin(), x.end()), n);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 2e-6) << "n=" << n << " i=" << i;
  }
}

TEST(HadamardForward, IsAnInvolutionWithoutSigns) {
  for (int64_t n = 2; n <= 1024; n *= 2) {
    const std::vector<float> x = random_vector(static_cast<size_t>(n), 3u);
    std::vector<float> y = x;
    forward(y, {}, n);
    forward(y, {}, n);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], x[i], 2e-6) << "n=" << n;
  }
}

TEST(HadamardForward, PreservesTheNorm) {
  for (int64_t n = 2; n <= 1024; n *= 2) {
    const std::vector<float> x = random_vector(static_cast<size_t>(3 * n), 5u);
    std::vector<float> y = x;
    forward(y, random_signs(y.size(), 9u), n);
    EXPECT_NEAR(norm(y), norm(x), 1e-5 * norm(x)) << "n=" << n;
  }
}

TEST(HadamardInverse, UndoesForwardWithSignsOverSeveralBlocks) {
  for (int64_t n : {32, 64, 128, 1024}) {
    const size_t width = static_cast<size_t>(5 * n);
    const std::vector<float> x = random_vector(width, 21u);
    const std::vector<float> s = random_signs(width, 22u);
    std::vector<float> y = x;
    forward(y, s, n);
    inverse(y, s, n);
    for (size_t i = 0; i < width; ++i) ASSERT_NEAR(y[i], x[i], 2e-6) << "n=" << n << " i=" << i;
  }
}

// Signs first in forward, last in inverse (model-spec §4.1). Applying them on the other side of the
// transform gives a different vector, so these comparisons would fail for the wrong order.
TEST(HadamardForward, AppliesSignsBeforeTheTransform) {
  const int64_t n = 64;
  const std::vector<float> x = random_vector(3 * n, 31u);
  const std::vector<float> s = random_signs(x.size(), 32u);
  std::vector<double> signed_x(x.size());
  for (size_t i = 0; i < x.size(); ++i) signed_x[i] = static_cast<double>(x[i]) * s[i];
  const std::vector<double> expected = explicit_transform(signed_x, n);

  std::vector<float> y = x;
  forward(y, s, n);
  double max_diff_from_signs_after = 0.0;
  const std::vector<double> unsigned_t = explicit_transform(std::vector<double>(x.begin(), x.end()), n);
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], expected[i], 2e-6) << i;
    max_diff_from_signs_after = std::max(max_diff_from_signs_after, std::abs(unsigned_t[i] * s[i] - y[i]));
  }
  EXPECT_GT(max_diff_from_signs_after, 0.1);
}

TEST(HadamardInverse, AppliesSignsAfterTheTransform) {
  const int64_t n = 64;
  const std::vector<float> z = random_vector(2 * n, 41u);
  const std::vector<float> s = random_signs(z.size(), 42u);
  const std::vector<double> transformed = explicit_transform(std::vector<double>(z.begin(), z.end()), n);
  std::vector<float> y = z;
  inverse(y, s, n);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], transformed[i] * s[i], 2e-6) << i;
}

// For an odd power of two 1/sqrt(n) is inexact in fp32; the reference scales by that fp32 value before
// the butterflies, and scaling after would round differently on some inputs.
TEST(HadamardForward, ScalesByFp32ReciprocalRootBeforeTheButterflies) {
  const int64_t n = 128;
  const std::vector<float> x = random_vector(static_cast<size_t>(n), 51u);
  const float scale = 1.0f / std::sqrt(static_cast<float>(n));
  std::vector<float> scaled_first = x;
  for (float& v : scaled_first) v *= scale;
  fwht(scaled_first.data(), n);
  std::vector<float> scaled_last = x;
  fwht(scaled_last.data(), n);
  for (float& v : scaled_last) v *= scale;

  std::vector<float> y = x;
  forward(y, {}, n);
  int differs_from_scale_last = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_EQ(y[i], scaled_first[i]) << i;
    differs_from_scale_last += y[i] != scaled_last[i] ? 1 : 0;
  }
  EXPECT_GT(differs_from_scale_last, 0);
}

TEST(HadamardForward, RefusesBadShapes) {
  std::vector<float> x(96, 1.0f);
  EXPECT_THROW(forward(x, {}, 48), Error);                            // not a power of two
  EXPECT_THROW(forward(x, {}, 64), Error);                            // 96 not a multiple of 64
  EXPECT_THROW(forward(x, std::vector<float>(32, 1.0f), 32), Error);  // sign count != width
}

}  // namespace
}  // namespace tern::hadamard
