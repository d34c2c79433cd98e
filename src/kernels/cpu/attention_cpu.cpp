#include "kernels/cpu/attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

// Keys per chunk below which the keys are not split further (per chunk the pool hands out a task and the
// merge reads one more partial result).
constexpr int64_t kMinChunkKeys = 256;

// Tasks (chunks × spans) per pool thread: more than one, so a thread slowed by other work is evened out.
constexpr int64_t kTasksPerThread = 4;

// Accumulator floats of one span (its query heads × head_dim), kept in L1/L2 while it streams the cache.
constexpr int64_t kSpanAccFloats = 1 << 14;

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
      rows.prefetch_next(kv.k, base, hd);
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
      rows.prefetch_next(kv.v, base, hd);
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t d = 0; d < hd; ++d)
          acc[j * hd + d] += weights[j][i] * element<P>(kv.v, kv.v_scales, hd, base + d);
      }
    }
  }
  static void scale(float* acc, float factor, int64_t hd) {
    for (int64_t d = 0; d < hd; ++d) acc[d] *= factor;
  }
};

}  // namespace

void attention_head_scalar(const AttentionSpan& span, const AttentionPartial& out) {
  switch (span.kv->precision) {
    case KvPrecision::kF16:
      return online_attention_span<ScalarBlock<KvPrecision::kF16>>(span, out);
    case KvPrecision::kF32:
      return online_attention_span<ScalarBlock<KvPrecision::kF32>>(span, out);
    case KvPrecision::kQ8:
      return online_attention_span<ScalarBlock<KvPrecision::kQ8>>(span, out);
  }
}

bool attention_avx512_supported() {
  const CpuFeatures& cpu = cpu_features();
  return cpu.has_avx2_fma() && cpu.avx512f && cpu.avx512bw && cpu.avx512vl;
}

AttentionHeadKernel attention_head_kernel() {
#if defined(__x86_64__)
  if (attention_avx512_supported()) return attention_head_avx512;
  if (cpu_features().has_avx2_fma()) return attention_head_avx2;
#endif
  return attention_head_scalar;
}

void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool) {
  attention(out, q, kv, n_keys, n_head, scale, pool, attention_head_kernel());
}

void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool, AttentionHeadKernel kernel) {
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  const bool parallel = threads > 1 && n_keys * kv.head_dim * n_head >= kParallelWork;
  const int64_t chunks =
      parallel ? std::clamp(n_keys / kMinChunkKeys, int64_t{1}, kTasksPerThread * threads) : 1;
  attention(out, q, kv, n_keys, n_head, scale, parallel ? pool : nullptr, kernel, chunks);
}

void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool, AttentionHeadKernel kernel, int64_t chunks) {
  const int64_t hd = kv.head_dim;
  if (hd < 1 || hd > ref::kMaxHeadDim || kv.n_kv < 1 || n_head % kv.n_kv != 0 || n_keys < 1) {
    fail(ErrorKind::kInternal, "cpu attention: head_dim {} (at most {}), {} heads over {} KV heads, {} keys",
         hd, ref::kMaxHeadDim, n_head, kv.n_kv, n_keys);
  }
  const int64_t group = n_head / kv.n_kv;
  const int64_t blocks = (n_keys + kAttentionKeyBlock - 1) / kAttentionKeyBlock;
  chunks = std::clamp(chunks, int64_t{1}, blocks);
  // KV heads per span: within the accumulator budget, and few enough that chunks × spans fill the pool.
  const int64_t threads = pool != nullptr ? pool->size() : 1;
  const int64_t wanted_spans = std::min(kv.n_kv, (kTasksPerThread * threads + chunks - 1) / chunks);
  const int64_t span_heads =
      std::clamp(std::min(kSpanAccFloats / (group * hd), (kv.n_kv + wanted_spans - 1) / wanted_spans),
                 int64_t{1}, kv.n_kv);
  const int64_t spans = (kv.n_kv + span_heads - 1) / span_heads;

  // Per chunk: acc [n_head][hd], then max and denom [n_head]. Grown to the largest call seen, so the token
  // loop allocates only while the context (and with it the chunk count) first grows.
  const int64_t chunk_floats = n_head * (hd + 2);
  thread_local std::vector<float> scratch;
  if (scratch.size() < static_cast<size_t>(chunks * chunk_floats))
    scratch.resize(static_cast<size_t>(chunks * chunk_floats));
  // The pool's threads reach this thread's scratch through the pointer (the name would be their own).
  float* const partials = scratch.data();
  const auto partial = [&](int64_t chunk, int64_t first_head) {
    float* base = partials + chunk * chunk_floats;
    return AttentionPartial{base + first_head * hd, base + n_head * hd + first_head,
                            base + n_head * hd + n_head + first_head};
  };

  const auto task = [&](int64_t index) {
    const int64_t chunk = index / spans, kv_first = index % spans * span_heads;
    AttentionSpan span;
    span.q = q;
    span.kv = &kv;
    span.group = group;
    span.kv_first = kv_first;
    span.kv_count = std::min(span_heads, kv.n_kv - kv_first);
    span.t_begin = std::min(n_keys, blocks * chunk / chunks * kAttentionKeyBlock);
    span.t_end = std::min(n_keys, blocks * (chunk + 1) / chunks * kAttentionKeyBlock);
    span.scale = scale;
    kernel(span, partial(chunk, kv_first * group));
  };
  const int64_t tasks = chunks * spans;
  if (pool != nullptr && pool->size() > 1 && tasks > 1) {
    pool->for_each(tasks, [&](int64_t index, int) { task(index); });
  } else {
    for (int64_t index = 0; index < tasks; ++index) task(index);
  }

  // Merge the chunks: each one's sums rescaled from its own maximum to the overall one.
  for (int64_t i = 0; i < n_head; ++i) {
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < chunks; ++c) max = std::max(max, *partial(c, i).max);
    float denom = 0.0f;
    float* o = out + i * hd;
    for (int64_t c = 0; c < chunks; ++c) {
      const AttentionPartial part = partial(c, i);
      const float factor = std::exp(*part.max - max);
      denom += factor * *part.denom;
      for (int64_t d = 0; d < hd; ++d) o[d] = (c == 0 ? 0.0f : o[d]) + factor * part.acc[d];
    }
    const float inverse = 1.0f / denom;
    for (int64_t d = 0; d < hd; ++d) o[d] *= inverse;
  }
}

}  // namespace tern::kernels::cpu
