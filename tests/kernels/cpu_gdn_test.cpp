// kernels/cpu GDN (fp32) against the double-precision oracle of kernels/ref, for every ISA this CPU runs.
#include "kernels/cpu/gdn_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/ref/l2_norm.h"

namespace tern::kernels::cpu {
namespace {

struct Tokens {
  int64_t n = 0;
  std::vector<float> q, k, v, g, beta;
  GdnInputs inputs() const { return {q.data(), k.data(), v.data(), g.data(), beta.data(), n}; }
};

// Realistic magnitudes: q, k L2-normed (q also scaled by 1/sqrt(dk)), v ~ N(0, 1), g in [−3, 0],
// β in (0, 1).
Tokens random_tokens(const GdnDims& d, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Tokens t{n, {}, {}, {}, {}, {}};
  t.q.resize(static_cast<size_t>(n * d.n_k * d.dk));
  t.k.resize(t.q.size());
  t.v.resize(static_cast<size_t>(n * d.n_v * d.dv));
  t.g.resize(static_cast<size_t>(n * d.n_v));
  t.beta.resize(t.g.size());
  for (float& x : t.q) x = normal(rng);
  for (float& x : t.k) x = normal(rng);
  for (float& x : t.v) x = normal(rng);
  for (float& x : t.g) x = -3.0f * unit(rng);
  for (float& x : t.beta) x = std::clamp(unit(rng), 0.01f, 0.99f);
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(d.dk));
  for (int64_t r = 0; r < n * d.n_k; ++r) {
    ref::l2_norm(&t.q[static_cast<size_t>(r * d.dk)], d.dk);
    ref::l2_norm(&t.k[static_cast<size_t>(r * d.dk)], d.dk);
    for (int64_t i = 0; i < d.dk; ++i) t.q[static_cast<size_t>(r * d.dk + i)] *= q_scale;
  }
  return t;
}

std::vector<float> random_state(const GdnDims& d, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> s(static_cast<size_t>(d.n_v * d.dk * d.dv));
  for (float& x : s) x = 0.3f * normal(rng);
  return s;
}

// max |got − want| ≤ tol · max(1, max |want|)
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0.0, scale = 1.0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  EXPECT_LE(worst, tol * scale) << what;
}

std::vector<const GdnKernels*> runnable_kernels() {
  std::vector<const GdnKernels*> sets{&gdn_kernels_scalar()};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) sets.push_back(&gdn_kernels_avx2());
  if (cpu_features().has_avx512_vnni()) sets.push_back(&gdn_kernels_avx512());
#endif
  return sets;
}

// The 27B shape, a vector multiple that is not a whole block (40 = 32 + 8), two AVX-512 slabs and a
// narrower rest (dv 296 = 2·128 + 40), and small odd shapes that leave scalar tails (dv 13, 7, 3).
const GdnDims kShapes[] = {{16, 48, 128, 128}, {2, 4, 16, 40}, {1, 2, 24, 296},
                           {1, 2, 24, 13},     {1, 3, 5, 7},   {2, 6, 4, 3}};

TEST(CpuGdn, RecurrentMatchesTheOracleAcrossCallsForEveryIsa) {
  ThreadPool pool(2);
  for (const GdnKernels* kernels : runnable_kernels()) {
    for (const GdnDims& d : kShapes) {
      for (ThreadPool* use_pool : {static_cast<ThreadPool*>(nullptr), &pool}) {
        SCOPED_TRACE(testing::Message() << kernels->name << " n_k " << d.n_k << " n_v " << d.n_v << " dk "
                                        << d.dk << " dv " << d.dv << (use_pool ? " pool" : ""));
        std::mt19937 rng(11);
        std::vector<float> state = random_state(d, rng);
        std::vector<float> want_state = state;
        // Calls of 1, 3, 1 and 37 tokens: the state carries over.
        for (int64_t n : {1, 3, 1, 37}) {
          const Tokens t = random_tokens(d, n, rng);
          std::vector<float> got(t.v.size()), want(t.v.size());
          gdn_recurrent(got.data(), state.data(), t.inputs(), d, use_pool, *kernels);
          ref::gdn_recurrent(want.data(), want_state.data(), t.inputs(), d);
          expect_close(got, want, 1e-5, "output");
          expect_close(state, want_state, 1e-5, "state");
        }
      }
    }
  }
}

#if defined(__x86_64__)
// The AVX-512 slabs do per column what the AVX2 blocks do, in the same order.
TEST(CpuGdn, Avx512EqualsAvx2BitForBit) {
  if (!cpu_features().has_avx512_vnni()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const GdnDims& d : kShapes) {
    SCOPED_TRACE(testing::Message() << "dk " << d.dk << " dv " << d.dv);
    std::mt19937 rng(12);
    std::vector<float> avx512_state = random_state(d, rng);
    std::vector<float> avx2_state = avx512_state;
    for (int64_t n : {1, 5}) {
      const Tokens t = random_tokens(d, n, rng);
      std::vector<float> avx512_out(t.v.size()), avx2_out(t.v.size());
      gdn_recurrent(avx512_out.data(), avx512_state.data(), t.inputs(), d, nullptr, gdn_kernels_avx512());
      gdn_recurrent(avx2_out.data(), avx2_state.data(), t.inputs(), d, nullptr, gdn_kernels_avx2());
      EXPECT_EQ(avx512_out, avx2_out);
      EXPECT_EQ(avx512_state, avx2_state);
    }
  }
}
#endif

// The cpu table runs both GDN entries on these kernels: prefill (gdn_chunked, any chunk, no scratch)
// matches the oracle's chunked form, and decode continues from the state it left.
TEST(CpuGdn, OpTableEntriesMatchTheOracle) {
  ThreadPool pool(2);
  const Ops& cpu = cpu_ops(pool);
  const GdnDims d{16, 48, 128, 128};
  std::mt19937 rng(5);
  std::vector<float> state = random_state(d, rng);
  std::vector<float> want_state = state;
  const Tokens prompt = random_tokens(d, 70, rng);
  std::vector<float> got(prompt.v.size()), want(prompt.v.size());
  std::vector<double> ref_scratch(ref::gdn_chunked_scratch_size(d, 64));
  EXPECT_EQ(cpu.gdn_chunked_scratch_size(d, 64), 0u);
  cpu.gdn_chunked(got.data(), state.data(), prompt.inputs(), d, 64, {});
  ref::gdn_chunked(want.data(), want_state.data(), prompt.inputs(), d, 64, ref_scratch);
  expect_close(got, want, 1e-5, "prefill output");
  expect_close(state, want_state, 1e-5, "prefill state");

  for (int step = 0; step < 3; ++step) {
    const Tokens one = random_tokens(d, 1, rng);
    std::vector<float> got_one(one.v.size()), want_one(one.v.size());
    cpu.gdn_recurrent(got_one.data(), state.data(), one.inputs(), d);
    ref::gdn_recurrent(want_one.data(), want_state.data(), one.inputs(), d);
    expect_close(got_one, want_one, 1e-5, "decode output");
    expect_close(state, want_state, 1e-5, "decode state");
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
