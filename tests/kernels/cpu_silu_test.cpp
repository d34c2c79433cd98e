// The CPU SiLU / SwiGLU kernels and the fused SwiGLU + ffn_inner site against the oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/cpu/silu.h"
#include "kernels/cpu/site_transform.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/site_transform.h"
#include "tests/support/random_acts.h"

namespace tern::kernels::cpu {
namespace {

std::vector<std::pair<const char*, SiluKernel>> runnable() {
  std::vector<std::pair<const char*, SiluKernel>> out{{"scalar", silu_scalar}};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) out.emplace_back("avx2", silu_avx2);
  if (cpu_features().has_avx512_vnni()) out.emplace_back("avx512", silu_avx512);
#endif
  return out;
}

using testing_support::gaussian;

// With up (SwiGLU, in place) and without (SiLU into another buffer).
TEST(CpuSilu, EveryKernelTracksTheOracleToAFewUlps) {
  for (const auto& [name, kernel] : runnable()) {
    for (bool gated : {true, false}) {
      for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{17}, size_t{40}, size_t{17408}}) {
        for (float scale : {0.5f, 4.0f, 40.0f}) {
          std::vector<float> gate = gaussian(n, scale, static_cast<uint32_t>(n)), want = gate;
          const std::vector<float> up = gaussian(n, 1.0f, static_cast<uint32_t>(n + 1));
          if (n >= 8) {  // the far tails and the signed zeros
            gate[0] = want[0] = 95.0f;
            gate[1] = want[1] = -95.0f;
            gate[2] = want[2] = -0.0f;
            gate[3] = want[3] = 0.0f;
          }
          if (gated) {
            kernel(gate.data(), gate.data(), up.data(), static_cast<int64_t>(n));
            ref::swiglu(want.data(), up.data(), static_cast<int64_t>(n));
          } else {
            const std::vector<float> x = gate;
            kernel(gate.data(), x.data(), nullptr, static_cast<int64_t>(n));
            ref::silu_values(want.data(), want.data(), static_cast<int64_t>(n));
          }
          for (size_t i = 0; i < n; ++i) {
            EXPECT_NEAR(gate[i], want[i], 4e-7 * std::fabs(want[i]) + 1e-30)
                << name << (gated ? " swiglu" : " silu") << " n " << n << " scale " << scale << " i " << i;
            EXPECT_EQ(std::signbit(gate[i]), std::signbit(want[i])) << name << " i " << i;
          }
        }
      }
    }
  }
}

TEST(CpuSilu, NanStaysNan) {
  for (const auto& [name, kernel] : runnable()) {
    std::vector<float> gate(19, 1.0f);
    const std::vector<float> up(19, 2.0f);
    gate[17] = std::numeric_limits<float>::quiet_NaN();
    kernel(gate.data(), gate.data(), up.data(), 19);
    EXPECT_TRUE(std::isnan(gate[17])) << name;
    EXPECT_FALSE(std::isnan(gate[16])) << name;
  }
}

std::vector<std::pair<const char*, SigmoidGateKernel>> runnable_gates() {
  std::vector<std::pair<const char*, SigmoidGateKernel>> out{{"scalar", sigmoid_gate_scalar}};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) out.emplace_back("avx2", sigmoid_gate_avx2);
  if (cpu_features().has_avx512_vnni()) out.emplace_back("avx512", sigmoid_gate_avx512);
#endif
  return out;
}

TEST(CpuSigmoidGate, EveryKernelTracksTheOracleToAFewUlps) {
  for (const auto& [name, kernel] : runnable_gates()) {
    for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{17}, size_t{40}, size_t{6144}}) {
      for (float scale : {0.5f, 4.0f, 40.0f}) {
        std::vector<float> gate = gaussian(n, scale, static_cast<uint32_t>(n));
        std::vector<float> x = gaussian(n, 1.0f, static_cast<uint32_t>(n + 1));
        if (n >= 8) {  // the far tails, and a gate of 0 (a half)
          gate[0] = 95.0f;
          gate[1] = -95.0f;
          gate[2] = 0.0f;
          x[3] = -0.0f;
        }
        std::vector<float> want = x;
        kernel(x.data(), gate.data(), static_cast<int64_t>(n));
        ref::sigmoid_gate(want.data(), gate.data(), static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i) {
          EXPECT_NEAR(x[i], want[i], 4e-7 * std::fabs(want[i]) + 1e-30)
              << name << " n " << n << " scale " << scale << " i " << i;
          EXPECT_EQ(std::signbit(x[i]), std::signbit(want[i])) << name << " i " << i;
        }
        if (n >= 8) {
          EXPECT_EQ(x[0], want[0]) << name;  // σ(95) rounds to 1
        }
      }
    }
    std::vector<float> x(19, 1.0f), gate(19, 0.5f);
    gate[2] = gate[17] = std::numeric_limits<float>::quiet_NaN();  // in a vector step and in the tail
    kernel(x.data(), gate.data(), 19);
    EXPECT_TRUE(std::isnan(x[2]) && std::isnan(x[17])) << name;
    EXPECT_FALSE(std::isnan(x[16])) << name;
  }
}

// The fused pass equals SwiGLU then the site, on a folded width and on a dense file (block 0).
TEST(CpuSilu, FusedSwigluSiteEqualsSwigluThenSite) {
  constexpr int64_t kTokens = 3, kWidth = 384, kBlock = 128;
  const std::vector<float> up = gaussian(kTokens * kWidth, 1.0f, 2);
  std::vector<float> signs = gaussian(kWidth, 1.0f, 3);
  for (float& s : signs) s = s < 0 ? -1.0f : 1.0f;
  for (int64_t block : {kBlock, int64_t{0}}) {
    std::vector<float> fused = gaussian(kTokens * kWidth, 2.0f, 1), want = fused;
    swiglu_site(fused.data(), up.data(), kTokens, kWidth, signs, block);
    ref::swiglu(want.data(), up.data(), kTokens * kWidth);
    if (block > 0) ref::site_forward(want.data(), kTokens, kWidth, signs, block);
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::fabs(double(fused[i]) - want[i]));
      scale = std::max(scale, std::fabs(double(want[i])));
    }
    EXPECT_GT(scale, 0.0);
    EXPECT_LE(worst, 2e-6 * scale) << "block " << block;
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
