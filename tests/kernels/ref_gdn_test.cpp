#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/ref/gdn.h"
#include "kernels/ref/l2_norm.h"

namespace tern::kernels::ref {
namespace {

struct Case {
  GdnDims dims;
  int64_t n_tokens;
  std::vector<float> q, k, v, g, beta, state;
};

Case random_case(GdnDims dims, int64_t n_tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Case c{dims, n_tokens, {}, {}, {}, {}, {}, {}};
  c.q.resize(n_tokens * dims.n_k * dims.dk);
  c.k.resize(c.q.size());
  c.v.resize(n_tokens * dims.n_v * dims.dv);
  c.g.resize(n_tokens * dims.n_v);
  c.beta.resize(c.g.size());
  c.state.resize(dims.n_v * dims.dk * dims.dv);
  for (float& x : c.q) x = normal(rng);
  for (float& x : c.k) x = normal(rng);
  for (float& x : c.v) x = normal(rng);
  for (float& x : c.g) x = -2.0f * unit(rng);
  for (float& x : c.beta) x = unit(rng);
  for (float& x : c.state) x = 0.3f * normal(rng);
  for (int64_t r = 0; r < n_tokens * dims.n_k; ++r) {
    l2_norm(&c.q[r * dims.dk], dims.dk);
    l2_norm(&c.k[r * dims.dk], dims.dk);
    for (int64_t i = 0; i < dims.dk; ++i) c.q[r * dims.dk + i] /= std::sqrt(static_cast<float>(dims.dk));
  }
  return c;
}

GdnInputs inputs(const Case& c) {
  return {c.q.data(), c.k.data(), c.v.data(), c.g.data(), c.beta.data(), c.n_tokens};
}

TEST(RefGdnRecurrent, MatchesTheDeltaRuleWrittenOut) {
  const GdnDims dims{2, 6, 4, 3};  // rep 3: v head h reads q/k head h / 3
  Case c = random_case(dims, 5, 1);
  std::vector<double> s(c.state.begin(), c.state.end());
  std::vector<double> expect(c.n_tokens * dims.n_v * dims.dv);
  for (int64_t t = 0; t < c.n_tokens; ++t) {
    for (int64_t h = 0; h < dims.n_v; ++h) {
      const int64_t kh = h / 3;
      double* S = &s[h * 12];
      const double decay = std::exp(double(c.g[t * 6 + h]));
      for (int i = 0; i < 12; ++i) S[i] *= decay;
      for (int j = 0; j < 3; ++j) {
        double r = 0;
        for (int i = 0; i < 4; ++i) r += S[i * 3 + j] * c.k[(t * 2 + kh) * 4 + i];
        const double delta = c.beta[t * 6 + h] * (c.v[(t * 6 + h) * 3 + j] - r);
        for (int i = 0; i < 4; ++i) S[i * 3 + j] += c.k[(t * 2 + kh) * 4 + i] * delta;
      }
      for (int j = 0; j < 3; ++j) {
        double o = 0;
        for (int i = 0; i < 4; ++i) o += S[i * 3 + j] * c.q[(t * 2 + kh) * 4 + i];
        expect[(t * 6 + h) * 3 + j] = o;
      }
    }
  }
  std::vector<float> out(expect.size());
  gdn_recurrent(out.data(), c.state.data(), inputs(c), dims);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expect[i], 1e-5) << i;
  for (size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(c.state[i], s[i], 1e-5) << i;
}

TEST(RefGdnChunked, EqualsRecurrentForEveryChunkSize) {
  const GdnDims dims{2, 4, 16, 8};
  for (int64_t n_tokens : {1, 5, 64, 130}) {
    for (int64_t chunk : {1, 3, 16, 64}) {
      Case walk = random_case(dims, n_tokens, static_cast<uint32_t>(n_tokens));
      Case chunked = walk;
      std::vector<float> out_walk(n_tokens * dims.n_v * dims.dv), out_chunk(out_walk.size());
      gdn_recurrent(out_walk.data(), walk.state.data(), inputs(walk), dims);
      std::vector<double> scratch(gdn_chunked_scratch_size(dims, chunk));
      gdn_chunked(out_chunk.data(), chunked.state.data(), inputs(chunked), dims, chunk, scratch);
      double worst = 0;
      for (size_t i = 0; i < out_walk.size(); ++i)
        worst = std::max(worst, double(std::abs(out_walk[i] - out_chunk[i])));
      for (size_t i = 0; i < walk.state.size(); ++i) {
        worst = std::max(worst, double(std::abs(walk.state[i] - chunked.state[i])));
      }
      std::printf("gdn chunked vs recurrent: T=%lld C=%lld worst |d| %.3g\n",
                  static_cast<long long>(n_tokens), static_cast<long long>(chunk), worst);
      EXPECT_LT(worst, 2e-5) << "T=" << n_tokens << " C=" << chunk;
    }
  }
}

TEST(RefGdnChunked, ZeroDecayEdgeAndStrongDecay) {
  const GdnDims dims{1, 1, 8, 8};
  for (float g_value : {0.0f, -30.0f}) {
    Case walk = random_case(dims, 70, 9);
    for (float& g : walk.g) g = g_value;
    Case chunked = walk;
    std::vector<float> a(70 * 8), b(70 * 8);
    gdn_recurrent(a.data(), walk.state.data(), inputs(walk), dims);
    std::vector<double> scratch(gdn_chunked_scratch_size(dims, 64));
    gdn_chunked(b.data(), chunked.state.data(), inputs(chunked), dims, 64, scratch);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4) << g_value << "," << i;
  }
}

}  // namespace
}  // namespace tern::kernels::ref
