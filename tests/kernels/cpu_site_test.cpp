// kernels/cpu Hadamard sites: bit-identical to the oracle (same operations in the same order).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/site_transform.h"
#include "kernels/ref/site_transform.h"

namespace tern::kernels::cpu {
namespace {

TEST(CpuSiteTransform, ForwardAndInverseAreBitIdenticalToTheOracle) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int64_t block : {8, 16, 32, 64, 128, 256}) {
    for (bool with_signs : {true, false}) {
      const int64_t width = 4 * block, tokens = 3;
      std::vector<float> signs;
      if (with_signs) {
        for (int64_t i = 0; i < width; ++i) signs.push_back(rng() % 2 ? 1.0f : -1.0f);
      }
      std::vector<float> x(static_cast<size_t>(width * tokens));
      for (float& v : x) v = normal(rng);
      std::vector<float> fast = x, oracle = x;
      site_forward(fast.data(), tokens, width, signs, block);
      ref::site_forward(oracle.data(), tokens, width, signs, block);
      EXPECT_EQ(fast, oracle) << "forward, block " << block << " signs " << with_signs;
      site_inverse(fast.data(), tokens, width, signs, block);
      ref::site_inverse(oracle.data(), tokens, width, signs, block);
      EXPECT_EQ(fast, oracle) << "inverse, block " << block << " signs " << with_signs;
    }
  }
}

TEST(CpuSiteTransform, RefusesWhatTheOracleRefuses) {
  std::vector<float> x(96);
  EXPECT_THROW(site_forward(x.data(), 1, 96, {}, 64), Error);  // width not a multiple of the block
  const std::vector<float> signs(10, 1.0f);
  EXPECT_THROW(site_forward(x.data(), 1, 64, signs, 64), Error);  // sign vector of the wrong width
}

}  // namespace
}  // namespace tern::kernels::cpu
