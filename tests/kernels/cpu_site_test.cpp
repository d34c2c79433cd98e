// kernels/cpu Hadamard sites: bit-identical to the oracle (same operations in the same order).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
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

// Spread over a pool by whole blocks, the sites give the caller's bits: a prompt chunk's rows and the
// decode FFN's single wide row, with and without signs.
TEST(CpuSiteTransform, PoolGivesTheSameBits) {
  ThreadPool pool(3);
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  struct Shape {
    int64_t tokens, width, block;
  };
  for (const Shape shape : {Shape{5, 4096, 256}, Shape{1, 17408, 1024}, Shape{64, 512, 8}}) {
    const int64_t width = shape.width, values = shape.tokens * width;
    std::vector<float> signs(static_cast<size_t>(width)), up(static_cast<size_t>(values));
    for (float& s : signs) s = rng() % 2 ? 1.0f : -1.0f;
    for (float& u : up) u = normal(rng);
    for (const bool with_signs : {true, false}) {
      const std::span<const float> sign_span =
          with_signs ? std::span<const float>(signs) : std::span<const float>();
      std::vector<float> x(static_cast<size_t>(values));
      for (float& v : x) v = normal(rng);
      std::vector<float> pooled = x, alone = x;
      site_forward(pooled.data(), shape.tokens, width, sign_span, shape.block, &pool);
      ref::site_forward(alone.data(), shape.tokens, width, sign_span, shape.block);
      EXPECT_EQ(pooled, alone) << "forward, width " << width << " signs " << with_signs;
      site_inverse(pooled.data(), shape.tokens, width, sign_span, shape.block, &pool);
      ref::site_inverse(alone.data(), shape.tokens, width, sign_span, shape.block);
      EXPECT_EQ(pooled, alone) << "inverse, width " << width << " signs " << with_signs;
      pooled = alone = x;
      swiglu_site(pooled.data(), up.data(), shape.tokens, width, sign_span, shape.block, &pool);
      swiglu_site(alone.data(), up.data(), shape.tokens, width, sign_span, shape.block);
      EXPECT_EQ(pooled, alone) << "swiglu, width " << width << " signs " << with_signs;
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
