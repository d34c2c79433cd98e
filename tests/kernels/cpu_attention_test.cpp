// The CPU attention kernels (scalar and AVX2, with and without the pool) against the double-precision
// oracle ref::attention on fp16, fp32 and q8 caches, over GQA ratios, head sizes and key counts that
// cover one key, partial key blocks and partial vector widths.
#include "kernels/cpu/attention_cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/cpu_ops.h"
#include "tests/support/kv_layout.h"

namespace tern::kernels::cpu {
namespace {

using ref::KvPrecision;

// A cache of n_keys positions filled with random keys and values, stored at one precision.
struct Cache {
  std::vector<uint16_t> k16, v16;
  std::vector<float> k32, v32;
  std::vector<int8_t> k8, v8;
  std::vector<float> k_scales, v_scales;
  ref::KvView view;

  Cache(KvPrecision precision, int64_t n_keys, int64_t n_kv, int64_t hd, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    // Drawn position by position, then placed at their rows of the cache layout.
    std::vector<float> k_drawn(static_cast<size_t>(n_keys * n_kv * hd)), v_drawn(k_drawn.size());
    for (float& x : k_drawn) x = 2.0f * normal(rng);  // scores spread over several units: a peaky softmax
    for (float& x : v_drawn) x = normal(rng);
    k32 = testing_support::in_kv_layout(k_drawn, n_keys, n_kv, hd);
    v32 = testing_support::in_kv_layout(v_drawn, n_keys, n_kv, hd);
    const int64_t rows = ref::kv_rows(n_keys, n_kv);
    const size_t n = k32.size();
    view.precision = precision;
    view.n_kv = n_kv;
    view.head_dim = hd;
    if (precision == KvPrecision::kF16) {
      for (float x : k32) k16.push_back(fp32_to_fp16(x));
      for (float x : v32) v16.push_back(fp32_to_fp16(x));
      view.k = k16.data();
      view.v = v16.data();
    } else if (precision == KvPrecision::kQ8) {
      const int64_t groups = ref::q8_groups(hd);
      k8.resize(n);
      v8.resize(n);
      k_scales.resize(static_cast<size_t>(rows * groups));
      v_scales.resize(k_scales.size());
      for (int64_t row = 0; row < rows; ++row) {
        ref::quantize_q8_head(&k32[row * hd], hd, &k8[row * hd], &k_scales[row * groups]);
        ref::quantize_q8_head(&v32[row * hd], hd, &v8[row * hd], &v_scales[row * groups]);
      }
      view.k = k8.data();
      view.v = v8.data();
      view.k_scales = k_scales.data();
      view.v_scales = v_scales.data();
    } else {
      view.k = k32.data();
      view.v = v32.data();
    }
  }
};

struct NamedKernel {
  const char* name;
  AttentionHeadKernel kernel;
};

std::vector<NamedKernel> kernels_to_test() {
  std::vector<NamedKernel> kernels{{"scalar", attention_head_scalar}};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) kernels.push_back({"avx2", attention_head_avx2});
  if (attention_avx512_supported()) kernels.push_back({"avx512", attention_head_avx512});
#endif
  return kernels;
}

// Largest |cpu − oracle| over the output, relative to the output's largest magnitude.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0.0, scale = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return worst / scale;
}

struct Shape {
  int64_t n_head, n_kv, head_dim;
};

TEST(CpuAttention, MatchesTheOracleOverPrecisionsShapesAndKeyCounts) {
  ThreadPool pool(3);
  // GQA groups 1 .. 7 (7: one run of six heads and one of one), head sizes with and without a partial
  // vector of 8 or 16 lanes.
  const Shape shapes[] = {{4, 4, 64}, {8, 2, 128}, {24, 4, 256}, {6, 3, 40},
                          {2, 1, 72}, {9, 3, 48},  {10, 2, 24},  {14, 2, 32}};
  for (const Shape& shape : shapes) {
    for (KvPrecision precision : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8}) {
      const int64_t max_keys = 301;
      const Cache cache(precision, max_keys, shape.n_kv, shape.head_dim,
                        static_cast<uint32_t>(shape.head_dim * 7 + shape.n_head));
      std::mt19937 rng(static_cast<uint32_t>(shape.n_head));
      std::normal_distribution<float> normal;
      std::vector<float> q(static_cast<size_t>(shape.n_head * shape.head_dim));
      for (float& x : q) x = normal(rng);
      const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
      for (int64_t n_keys : {1, 7, 16, 17, 33, 300, 301}) {
        std::vector<float> want(q.size()), got(q.size()), pooled(q.size());
        ref::attention(want.data(), q.data(), cache.view, n_keys, shape.n_head, scale);
        for (const auto& [name, kernel] : kernels_to_test()) {
          attention(got.data(), q.data(), cache.view, n_keys, shape.n_head, scale, nullptr, kernel);
          EXPECT_LT(relative_error(got, want), 1e-5)
              << shape.n_head << "/" << shape.n_kv << " hd " << shape.head_dim << " keys " << n_keys
              << " precision " << static_cast<int>(precision) << " " << name;
          attention(pooled.data(), q.data(), cache.view, n_keys, shape.n_head, scale, &pool, kernel);
          EXPECT_LT(relative_error(pooled, want), 1e-5) << "pooled, keys " << n_keys;
        }
      }
    }
  }
}

TEST(CpuAttention, KeysSplitIntoChunksMergeToTheOracle) {
  // Split-K: the keys cut into ranges (of whole key blocks, the last one partial) whose partial results
  // are merged by their maxima; with and without the pool, every group size of one run.
  ThreadPool pool(2);
  for (const Shape& shape : {Shape{24, 4, 256}, Shape{5, 1, 64}, Shape{6, 2, 40}, Shape{4, 4, 16}}) {
    for (KvPrecision precision : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8}) {
      const int64_t max_keys = 1000;
      const Cache cache(precision, max_keys, shape.n_kv, shape.head_dim, 31);
      std::mt19937 rng(32);
      std::normal_distribution<float> normal;
      std::vector<float> q(static_cast<size_t>(shape.n_head * shape.head_dim));
      for (float& x : q) x = normal(rng);
      const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
      for (int64_t n_keys : {1, 17, 100, 513, 1000}) {
        std::vector<float> want(q.size()), got(q.size());
        ref::attention(want.data(), q.data(), cache.view, n_keys, shape.n_head, scale);
        for (const auto& [name, kernel] : kernels_to_test()) {
          for (int64_t chunks : {2, 3, 7, 64}) {
            for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
              attention(got.data(), q.data(), cache.view, n_keys, shape.n_head, scale, p, kernel, chunks);
              EXPECT_LT(relative_error(got, want), 1e-5)
                  << shape.n_head << "/" << shape.n_kv << " hd " << shape.head_dim << " keys " << n_keys
                  << " chunks " << chunks << " precision " << static_cast<int>(precision) << " " << name;
            }
          }
        }
      }
    }
  }
}

TEST(CpuAttention, Q8CacheStaysCloseToF32) {
  // Same keys and values stored at f32 and q8: the 8-bit cache moves the output by well under 1 %.
  const int64_t n_head = 8, n_kv = 2, hd = 256, n_keys = 200;
  const Cache f32(KvPrecision::kF32, n_keys, n_kv, hd, 21);
  const Cache q8(KvPrecision::kQ8, n_keys, n_kv, hd, 21);
  std::mt19937 rng(22);
  std::normal_distribution<float> normal;
  std::vector<float> q(n_head * hd), want(q.size()), got(q.size());
  for (float& x : q) x = normal(rng);
  ref::attention(want.data(), q.data(), f32.view, n_keys, n_head, 0.0625f);
  attention(got.data(), q.data(), q8.view, n_keys, n_head, 0.0625f, nullptr);
  const double error = relative_error(got, want);
  EXPECT_LT(error, 1e-2);
  EXPECT_GT(error, 1e-5);  // and it really read the 8-bit codes
}

TEST(CpuAttention, KeysBeyondNKeysAreNotRead) {
  const int64_t hd = 64;
  Cache cache(KvPrecision::kF32, 20, 1, hd, 11);
  std::vector<float> q(hd, 0.1f), before(hd), after(hd);
  for (const auto& [name, kernel] : kernels_to_test()) {
    attention(before.data(), q.data(), cache.view, 17, 1, 0.125f, nullptr, kernel);
    for (size_t i = 17 * hd; i < cache.k32.size(); ++i) cache.k32[i] = cache.v32[i] = 1e30f;
    attention(after.data(), q.data(), cache.view, 17, 1, 0.125f, nullptr, kernel);
    EXPECT_EQ(before, after) << name;
  }
}

TEST(CpuAttention, IsTheCpuOpTablesAttention) {
  const Cache cache(KvPrecision::kF16, 50, 2, 128, 12);
  std::vector<float> q(4 * 128, 0.05f), want(q.size()), got(q.size());
  ThreadPool pool(2);
  cpu_ops(pool).attention(got.data(), q.data(), cache.view, 50, 4, 0.1f);
  attention(want.data(), q.data(), cache.view, 50, 4, 0.1f, &pool);
  EXPECT_EQ(got, want);
  EXPECT_NE(cpu_ops(pool).attention, reference_ops().attention);
}

TEST(CpuAttention, RefusesAHeadDimAboveTheLimit) {
  ref::KvView view;
  view.n_kv = 1;
  view.head_dim = ref::kMaxHeadDim + 1;
  std::vector<float> q(static_cast<size_t>(view.head_dim)), out(q.size());
  EXPECT_THROW(attention(out.data(), q.data(), view, 1, 1, 1.0f, nullptr), Error);
}

}  // namespace
}  // namespace tern::kernels::cpu
