#include "kernels/cpu/attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/attention_head.h"

namespace tern::kernels::cpu {

namespace {

using ref::KvPrecision;

// Below this many multiply-adds (keys × head_dim × heads) a call stays on the calling thread: waking
// the pool would cost more than it saves.
constexpr int64_t kParallelWork = 1 << 15;

template <KvPrecision P>
float element(const void* data, [[maybe_unused]] const float* scales, [[maybe_unused]] int64_t head_dim,
              int64_t index) {
  if constexpr (P == KvPrecision::kF16) {
    return fp16_to_fp32(static_cast<const uint16_t*>(data)[index]);
  } else if constexpr (P == KvPrecision::kF32) {
    return static_cast<const float*>(data)[index];
  } else {
    const int64_t row = index / head_dim;
    const int64_t group = (index % head_dim) / ref::kQ8Group;
    return static_cast<float>(static_cast<const int8_t*>(data)[index]) *
           scales[row * ref::q8_groups(head_dim) + group];
  }
}

template <KvPrecision P>
struct ScalarBlock {
  static void scores(const float* q, int64_t n, const KvHeadRows& rows, int64_t t0, int64_t count,
                     AttentionBlock& out) {
    const ref::KvView& kv = rows.kv;
    const int64_t hd = kv.head_dim;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t base = rows.row(t0 + i) * hd;
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (int64_t d = 0; d < hd; ++d) sum += q[j * hd + d] * element<P>(kv.k, kv.k_scales, hd, base + d);
        out[j][i] = sum;
      }
    }
  }
  static float scaled_max(float* x, int64_t count, float scale) {
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < count; ++i) {
      x[i] *= scale;
      max = x[i] > max ? x[i] : max;
    }
    return max;
  }
  static float exp_sum(float* x, int64_t count, float max) {
    float sum = 0.0f;
    for (int64_t i = 0; i < kAttentionKeyBlock; ++i) {
      x[i] = i < count ? std::exp(x[i] - max) : 0.0f;
      sum += x[i];
    }
    return sum;
  }
  static void add(float* acc, const AttentionBlock& weights, int64_t n, const KvHeadRows& rows, int64_t t0,
                  int64_t count) {
    const ref::KvView& kv = rows.kv;
    const int64_t hd = kv.head_dim;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t base = rows.row(t0 + i) * hd;
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t d = 0; d < hd; ++d)
          acc[j * ref::kMaxHeadDim + d] += weights[j][i] * element<P>(kv.v, kv.v_scales, hd, base + d);
      }
    }
  }
  static void scale(float* acc, float factor, int64_t hd) {
    for (int64_t d = 0; d < hd; ++d) acc[d] *= factor;
  }
};

}  // namespace

void attention_head_scalar(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                           int64_t n_keys, float scale) {
  switch (kv.precision) {
    case KvPrecision::kF16:
      return online_attention_group<ScalarBlock<KvPrecision::kF16>>(out, q, kv, kv_head, n, n_keys, scale);
    case KvPrecision::kF32:
      return online_attention_group<ScalarBlock<KvPrecision::kF32>>(out, q, kv, kv_head, n, n_keys, scale);
    case KvPrecision::kQ8:
      return online_attention_group<ScalarBlock<KvPrecision::kQ8>>(out, q, kv, kv_head, n, n_keys, scale);
  }
}

bool attention_avx512_supported() {
  const CpuFeatures& cpu = cpu_features();
  return cpu.has_avx2_fma() && cpu.avx512f && cpu.avx512bw && cpu.avx512vl;
}

AttentionHeadKernel attention_head_kernel() {
  if (attention_avx512_supported()) return attention_head_avx512;
  return cpu_features().has_avx2_fma() ? attention_head_avx2 : attention_head_scalar;
}

void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool) {
  attention(out, q, kv, n_keys, n_head, scale, pool, attention_head_kernel());
}

void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool, AttentionHeadKernel kernel) {
  const int64_t hd = kv.head_dim;
  if (hd < 1 || hd > ref::kMaxHeadDim || kv.n_kv < 1 || n_head % kv.n_kv != 0) {
    fail(ErrorKind::kInternal, "cpu attention: head_dim {} (at most {}), {} heads over {} KV heads", hd,
         ref::kMaxHeadDim, n_head, kv.n_kv);
  }
  const int64_t group = n_head / kv.n_kv;
  // Tasks: (KV head, run of at most kAttentionMaxGroup of its query heads), each reading the KV once.
  const int64_t runs = (group + kAttentionMaxGroup - 1) / kAttentionMaxGroup;
  const auto task = [&](int64_t index) {
    const int64_t kv_head = index / runs;
    const int64_t first = kv_head * group + index % runs * kAttentionMaxGroup;
    const int64_t count = std::min(kAttentionMaxGroup, (kv_head + 1) * group - first);
    kernel(out + first * hd, q + first * hd, kv, kv_head, count, n_keys, scale);
  };
  const int64_t tasks = kv.n_kv * runs;
  if (pool != nullptr && pool->size() > 1 && tasks > 1 && n_keys * hd * n_head >= kParallelWork) {
    pool->for_each(tasks, [&](int64_t index, int) { task(index); });
  } else {
    for (int64_t index = 0; index < tasks; ++index) task(index);
  }
}

}  // namespace tern::kernels::cpu
