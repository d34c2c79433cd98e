#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/ref/activation.h"
#include "kernels/ref/argmax.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rms_norm.h"

namespace tern::kernels::ref {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(RefRmsNorm, MatchesFormulaWithStoredGain) {
  const auto x = random_vector(96, 1);
  const auto gain = random_vector(96, 2);
  std::vector<float> out(96);
  rms_norm(out.data(), x.data(), gain.data(), 96, 1e-6f);
  double mean_sq = 0;
  for (float v : x) mean_sq += double(v) * v;
  mean_sq /= 96;
  for (int i = 0; i < 96; ++i) {
    const double expect = gain[i] * x[i] / std::sqrt(mean_sq + 1e-6);
    EXPECT_NEAR(out[i], expect, 1e-6 * std::abs(expect) + 1e-12) << i;
  }
}

TEST(RefRmsNorm, EpsilonIsInsideTheSqrt) {
  std::vector<float> x(4, 0.0f), gain(4, 1.0f), out(4);
  x[0] = 1e-3f;
  rms_norm(out.data(), x.data(), gain.data(), 4, 1e-6f);
  // mean x² = 2.5e-7; 1e-3 / sqrt(2.5e-7 + 1e-6)
  EXPECT_NEAR(out[0], 1e-3 / std::sqrt(1.25e-6), 1e-6);
}

TEST(RefGatedRmsNorm, MultipliesBySiluOfGate) {
  const auto x = random_vector(32, 3);
  const auto gate = random_vector(32, 4, 3.0f);
  const auto gain = random_vector(32, 5);
  std::vector<float> out(32), normed(32);
  gated_rms_norm(out.data(), x.data(), gate.data(), gain.data(), 32, 1e-6f);
  rms_norm(normed.data(), x.data(), gain.data(), 32, 1e-6f);
  for (int i = 0; i < 32; ++i) {
    const double g = gate[i];
    EXPECT_NEAR(out[i], normed[i] * g / (1 + std::exp(-g)), 1e-6) << i;
  }
}

TEST(RefL2Norm, HfFormWithEpsilonInsideRsqrt) {
  auto x = random_vector(128, 6);
  const auto original = x;
  l2_norm(x.data(), 128);
  double sum_sq = 0;
  for (float v : original) sum_sq += double(v) * v;
  for (int i = 0; i < 128; ++i) EXPECT_NEAR(x[i], original[i] / std::sqrt(sum_sq + 1e-6), 1e-7);
  std::vector<float> zero(8, 0.0f);
  l2_norm(zero.data(), 8);
  for (float v : zero) EXPECT_EQ(v, 0.0f);
}

TEST(RefActivation, FormulasAndSoftplusThreshold) {
  for (float x : {-30.0f, -2.5f, 0.0f, 0.7f, 19.9f, 20.0f, 20.5f, 50.0f}) {
    EXPECT_NEAR(sigmoid(x), 1 / (1 + std::exp(-double(x))), 1e-7);
    EXPECT_NEAR(silu(x), x / (1 + std::exp(-double(x))), 1e-6 * (1 + std::abs(x)));
  }
  EXPECT_EQ(softplus(20.5f), 20.5f);
  EXPECT_FLOAT_EQ(softplus(20.0f), static_cast<float>(std::log1p(std::exp(20.0))));
  EXPECT_FLOAT_EQ(softplus(-3.0f), static_cast<float>(std::log1p(std::exp(-3.0))));
  EXPECT_FLOAT_EQ(softplus(0.0f), static_cast<float>(std::log(2.0)));
}

TEST(RefArgmax, LowestIndexWinsTies) {
  const std::vector<float> x{1.0f, 3.0f, -2.0f, 3.0f, 3.0f};
  EXPECT_EQ(argmax(x.data(), 5), 1);
  const std::vector<float> single{-7.0f};
  EXPECT_EQ(argmax(single.data(), 1), 0);
  const std::vector<float> nan_first{std::nanf(""), 0.5f, 0.5f};
  EXPECT_EQ(argmax(nan_first.data(), 3), 1);
}

}  // namespace
}  // namespace tern::kernels::ref
