// RoPE, attention over a KV cache and the causal conv, each against a direct formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/half.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/conv.h"
#include "kernels/ref/rope.h"
#include "tests/support/kv_layout.h"

namespace tern::kernels::ref {
namespace {

using testing_support::in_kv_layout;

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(RefRope, NeoxPairsOnTheFirstRopeDims) {
  const int64_t head_dim = 32, rope_dim = 8;
  const double theta = 1e7;
  for (int64_t pos : {0, 1, 17, 5000}) {
    auto x = random_vector(head_dim, static_cast<uint32_t>(pos) + 1);
    const auto original = x;
    std::vector<double> cos_sin(rope_dim);
    rope_angles(cos_sin.data(), rope_dim, pos, theta);
    rope_rotate(x.data(), rope_dim, cos_sin.data());
    for (int64_t i = 0; i < rope_dim / 2; ++i) {
      const double angle = double(pos) / std::pow(theta, 2.0 * double(i) / double(rope_dim));
      const double a = original[i], b = original[i + 4];
      EXPECT_NEAR(x[i], a * std::cos(angle) - b * std::sin(angle), 1e-6) << pos << "," << i;
      EXPECT_NEAR(x[i + 4], b * std::cos(angle) + a * std::sin(angle), 1e-6) << pos << "," << i;
    }
    for (int64_t i = rope_dim; i < head_dim; ++i) EXPECT_EQ(x[i], original[i]);
    if (pos == 0) {
      EXPECT_EQ(x, original);
    }
  }
}

// Softmax attention written the obvious way over fp32 copies of the cache, rows [position][n_kv][hd].
std::vector<double> direct_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, int64_t n_keys, int64_t n_head,
                                     int64_t n_kv, int64_t hd, double scale) {
  std::vector<double> out(n_head * hd, 0.0);
  for (int64_t h = 0; h < n_head; ++h) {
    const int64_t j = h / (n_head / n_kv);
    std::vector<double> s(n_keys);
    double m = -1e300;
    for (int64_t t = 0; t < n_keys; ++t) {
      double dot = 0;
      for (int64_t d = 0; d < hd; ++d) dot += double(q[h * hd + d]) * k[(t * n_kv + j) * hd + d];
      s[t] = dot * scale;
      m = std::max(m, s[t]);
    }
    double z = 0;
    for (double& e : s) z += (e = std::exp(e - m));
    for (int64_t t = 0; t < n_keys; ++t) {
      for (int64_t d = 0; d < hd; ++d) out[h * hd + d] += s[t] / z * v[(t * n_kv + j) * hd + d];
    }
  }
  return out;
}

TEST(RefAttention, CausalGqaSoftmaxFp32AndFp16Storage) {
  // 37 positions: two whole blocks of the cache layout and part of a third.
  const int64_t n_head = 6, n_kv = 2, hd = 16, capacity = 37;
  const auto q = random_vector(n_head * hd, 1);
  auto k = random_vector(capacity * n_kv * hd, 2);
  auto v = random_vector(capacity * n_kv * hd, 3);
  for (float& x : k) x *= 3.0f;  // peaky scores
  for (bool fp16 : {false, true}) {
    std::vector<uint16_t> k16(k.size()), v16(v.size());
    std::vector<float> kr = k, vr = v;
    for (size_t i = 0; i < k.size(); ++i) {
      k16[i] = fp32_to_fp16(k[i]);
      v16[i] = fp32_to_fp16(v[i]);
      if (fp16) {
        kr[i] = fp16_to_fp32(k16[i]);
        vr[i] = fp16_to_fp32(v16[i]);
      }
    }
    const auto k32_cache = in_kv_layout(k, capacity, n_kv, hd),
               v32_cache = in_kv_layout(v, capacity, n_kv, hd);
    const auto k16_cache = in_kv_layout(k16, capacity, n_kv, hd);
    const auto v16_cache = in_kv_layout(v16, capacity, n_kv, hd);
    const KvView view{fp16 ? static_cast<const void*>(k16_cache.data()) : k32_cache.data(),
                      fp16 ? static_cast<const void*>(v16_cache.data()) : v32_cache.data(),
                      fp16 ? KvPrecision::kF16 : KvPrecision::kF32, n_kv, hd};
    for (int64_t n_keys : {1, 4, 9, 16, 17, 37}) {
      std::vector<float> out(n_head * hd);
      attention(out.data(), q.data(), view, n_keys, n_head, 0.25f);
      const auto expect = direct_attention(q, kr, vr, n_keys, n_head, n_kv, hd, 0.25);
      for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expect[i], 1e-6) << fp16 << "," << n_keys;
    }
  }
}

TEST(RefAttention, KeysBeyondNKeysAreNotRead) {
  const int64_t hd = 8;
  const auto q = random_vector(hd, 4);
  auto k = random_vector(3 * hd, 5);
  auto v = random_vector(3 * hd, 6);
  std::vector<float> before(hd), after(hd);
  const KvView view{k.data(), v.data(), KvPrecision::kF32, 1, hd};
  attention(before.data(), q.data(), view, 2, 1, 0.5f);
  for (int64_t d = 0; d < hd; ++d) k[2 * hd + d] = v[2 * hd + d] = 1e30f;
  attention(after.data(), q.data(), view, 2, 1, 0.5f);
  EXPECT_EQ(before, after);
}

TEST(RefAttention, Q8StorageReadsAsCodesTimesGroupScales) {
  // head_dim 40: one full group of 32 and a short group of 8.
  const int64_t n_head = 4, n_kv = 2, hd = 40, n_keys = 7;
  const int64_t groups = q8_groups(hd);
  ASSERT_EQ(groups, 2);
  const auto q = random_vector(n_head * hd, 7);
  const auto k = in_kv_layout(random_vector(n_keys * n_kv * hd, 8), n_keys, n_kv, hd);
  const auto v = in_kv_layout(random_vector(n_keys * n_kv * hd, 9), n_keys, n_kv, hd);
  const int64_t rows = kv_rows(n_keys, n_kv);
  std::vector<int8_t> k8(k.size()), v8(v.size());
  std::vector<float> k_scales(rows * groups), v_scales(k_scales.size());
  for (int64_t row = 0; row < rows; ++row) {
    quantize_q8_head(&k[row * hd], hd, &k8[row * hd], &k_scales[row * groups]);
    quantize_q8_head(&v[row * hd], hd, &v8[row * hd], &v_scales[row * groups]);
  }
  // What the codes read back as, rows [position][n_kv][hd] for the direct computation.
  std::vector<float> kr(n_keys * n_kv * hd), vr(kr.size());
  for (int64_t t = 0; t < n_keys; ++t) {
    for (int64_t j = 0; j < n_kv; ++j) {
      const int64_t row = kv_row(t, j, n_kv);
      for (int64_t d = 0; d < hd; ++d) {
        const size_t flat = (t * n_kv + j) * hd + d, scale_at = row * groups + d / kQ8Group;
        kr[flat] = static_cast<float>(static_cast<double>(k8[row * hd + d]) * k_scales[scale_at]);
        vr[flat] = static_cast<float>(static_cast<double>(v8[row * hd + d]) * v_scales[scale_at]);
      }
    }
  }
  const KvView view{k8.data(), v8.data(), KvPrecision::kQ8, n_kv, hd, k_scales.data(), v_scales.data()};
  std::vector<float> out(n_head * hd);
  attention(out.data(), q.data(), view, n_keys, n_head, 0.2f);
  const auto expect = direct_attention(q, kr, vr, n_keys, n_head, n_kv, hd, 0.2);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expect[i], 1e-6) << i;
}

TEST(RefQ8, RoundTripErrorIsAtMostHalfAStepPerGroup) {
  const int64_t hd = 72;  // groups of 32, 32 and 8
  auto x = random_vector(hd, 10);
  x[40] = 0.0f;
  for (int64_t i = 64; i < hd; ++i) x[i] = 0.0f;  // an all-zero group: scale 0, codes 0
  x[3] = 25.0f;                                   // a large value sets its group's step
  std::vector<int8_t> codes(hd);
  std::vector<float> scales(q8_groups(hd));
  quantize_q8_head(x.data(), hd, codes.data(), scales.data());
  for (int64_t g = 0; g < q8_groups(hd); ++g) {
    float max_abs = 0.0f;
    for (int64_t i = g * kQ8Group; i < std::min(hd, (g + 1) * kQ8Group); ++i)
      max_abs = std::max(max_abs, std::fabs(x[i]));
    EXPECT_FLOAT_EQ(scales[g], max_abs / 127.0f) << g;
    for (int64_t i = g * kQ8Group; i < std::min(hd, (g + 1) * kQ8Group); ++i) {
      EXPECT_LE(std::fabs(static_cast<float>(codes[i]) * scales[g] - x[i]), 0.5f * scales[g] * 1.0001f) << i;
    }
  }
  EXPECT_EQ(scales[2], 0.0f);
  EXPECT_EQ(codes[3], 127);
  EXPECT_EQ(codes[40], 0);
  for (int64_t i = 64; i < hd; ++i) EXPECT_EQ(codes[i], 0);
}

TEST(RefCausalConv, EqualsZeroPaddedConvAndChunksCompose) {
  const int64_t channels = 5, kernel = 4, n = 11;
  const auto in = random_vector(n * channels, 7);
  const auto weight = random_vector(channels * kernel, 8);
  // Direct: out[t][c] = Σ_i w[c][i] · in[t − 3 + i][c], zero before the start.
  std::vector<double> expect(n * channels, 0.0);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < kernel; ++i) {
        const int64_t src = t - (kernel - 1) + i;
        if (src >= 0) expect[t * channels + c] += double(weight[c * kernel + i]) * in[src * channels + c];
      }
    }
  }
  for (int64_t split : {1, 2, 3, 7, 11}) {  // first chunk length; the rest follows in one or more chunks
    std::vector<float> state((kernel - 1) * channels, 0.0f), out(n * channels);
    int64_t t = 0;
    for (int64_t len = split; t < n; len = std::min<int64_t>(2, n - t)) {
      len = std::min(len, n - t);
      causal_conv(&out[t * channels], &in[t * channels], state.data(), weight.data(), len, channels, kernel);
      t += len;
    }
    for (int64_t i = 0; i < n * channels; ++i) EXPECT_NEAR(out[i], expect[i], 1e-5) << split << "," << i;
    // The state holds the last three raw inputs, oldest first.
    for (int64_t r = 0; r < kernel - 1; ++r) {
      for (int64_t c = 0; c < channels; ++c) {
        EXPECT_EQ(state[r * channels + c], in[(n - (kernel - 1) + r) * channels + c]);
      }
    }
  }
}

}  // namespace
}  // namespace tern::kernels::ref
