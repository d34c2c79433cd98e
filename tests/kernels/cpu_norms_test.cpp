// The CPU norms and causal conv1d (norms_cpu.h) against the oracle.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/norms_cpu.h"
#include "kernels/ref/conv.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rms_norm.h"
#include "tests/support/random_acts.h"

namespace tern::kernels::cpu {
namespace {

using testing_support::gaussian;

// Distance in representable floats (same sign assumed: these outputs share the input's sign).
int64_t ulps(float a, float b) {
  return std::abs(static_cast<int64_t>(std::bit_cast<int32_t>(a)) - std::bit_cast<int32_t>(b));
}

const size_t kLengths[] = {1, 3, 4, 7, 8, 9, 128, 256, 5120, 6144};

TEST(CpuNorms, RmsNormIsTheOracleToOneRounding) {
  for (size_t n : kLengths) {
    const std::vector<float> x = gaussian(n, 3.0f, static_cast<uint32_t>(n));
    const std::vector<float> gain = gaussian(n, 1.0f, static_cast<uint32_t>(n + 1));
    std::vector<float> got(n), want(n);
    rms_norm(got.data(), x.data(), gain.data(), static_cast<int64_t>(n), 1e-6f);
    ref::rms_norm(want.data(), x.data(), gain.data(), static_cast<int64_t>(n), 1e-6f);
    for (size_t i = 0; i < n; ++i) EXPECT_LE(ulps(got[i], want[i]), 1) << "n " << n << " i " << i;
    std::vector<float> in_place = x;  // out may alias x
    rms_norm(in_place.data(), in_place.data(), gain.data(), static_cast<int64_t>(n), 1e-6f);
    EXPECT_EQ(in_place, got) << "n " << n;
  }
}

TEST(CpuNorms, L2NormIsTheOracleToOneRounding) {
  for (size_t n : kLengths) {
    std::vector<float> got = gaussian(n, 0.2f, static_cast<uint32_t>(n)), want = got;
    l2_norm(got.data(), static_cast<int64_t>(n), ref::kL2NormEps);
    ref::l2_norm(want.data(), static_cast<int64_t>(n), ref::kL2NormEps);
    for (size_t i = 0; i < n; ++i) EXPECT_LE(ulps(got[i], want[i]), 1) << "n " << n << " i " << i;
  }
}

TEST(CpuNorms, GatedRmsNormTracksTheOracleToAFewUlps) {
  for (size_t n : kLengths) {
    const std::vector<float> x = gaussian(n, 3.0f, static_cast<uint32_t>(n));
    const std::vector<float> gate = gaussian(n, 4.0f, static_cast<uint32_t>(n + 2));
    const std::vector<float> gain = gaussian(n, 1.0f, static_cast<uint32_t>(n + 1));
    std::vector<float> got(n), want(n);
    gated_rms_norm(got.data(), x.data(), gate.data(), gain.data(), static_cast<int64_t>(n), 1e-6f);
    ref::gated_rms_norm(want.data(), x.data(), gate.data(), gain.data(), static_cast<int64_t>(n), 1e-6f);
    for (size_t i = 0; i < n; ++i)
      EXPECT_NEAR(got[i], want[i], 6e-7 * std::fabs(want[i]) + 1e-30) << "n " << n << " i " << i;
  }
}

// Same outputs and the same state, bit for bit, over consecutive calls (the state carried between them).
TEST(CpuNorms, CausalConvIsTheOracleBitForBit) {
  for (int64_t kernel : {2, 4}) {
    for (int64_t channels : {1, 5, 8, 13, 10240}) {
      const auto c = static_cast<size_t>(channels);
      const std::vector<float> weight = gaussian(c * static_cast<size_t>(kernel), 1.0f, 7);
      std::vector<float> state = gaussian(c * static_cast<size_t>(kernel - 1), 1.0f, 8), want_state = state;
      uint32_t seed = 9;
      for (int64_t n_tokens : {1, 2, 5, 1}) {
        const std::vector<float> in = gaussian(c * static_cast<size_t>(n_tokens), 2.0f, ++seed);
        std::vector<float> got(in.size()), want(in.size());
        causal_conv(got.data(), in.data(), state.data(), weight.data(), n_tokens, channels, kernel);
        ref::causal_conv(want.data(), in.data(), want_state.data(), weight.data(), n_tokens, channels,
                         kernel);
        EXPECT_EQ(got, want) << "kernel " << kernel << " channels " << channels << " tokens " << n_tokens;
        EXPECT_EQ(state, want_state) << "kernel " << kernel << " channels " << channels << " tokens "
                                     << n_tokens;
      }
    }
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
