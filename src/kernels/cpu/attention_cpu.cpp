#include "kernels/cpu/attention_cpu.h"

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
struct ScalarRow {
  static float dot(const float* q, const void* data, const float* scales, int64_t hd, int64_t row) {
    float sum = 0.0f;
    for (int64_t d = 0; d < hd; ++d) sum += q[d] * element<P>(data, scales, hd, row * hd + d);
    return sum;
  }
  static void add(float* acc, float weight, const void* data, const float* scales, int64_t hd, int64_t row) {
    for (int64_t d = 0; d < hd; ++d) acc[d] += weight * element<P>(data, scales, hd, row * hd + d);
  }
  static void scale(float* acc, float factor, int64_t hd) {
    for (int64_t d = 0; d < hd; ++d) acc[d] *= factor;
  }
};

}  // namespace

void attention_head_scalar(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n_keys,
                           float scale) {
  switch (kv.precision) {
    case KvPrecision::kF16:
      return online_attention_head<ScalarRow<KvPrecision::kF16>>(out, q, kv, kv_head, n_keys, scale);
    case KvPrecision::kF32:
      return online_attention_head<ScalarRow<KvPrecision::kF32>>(out, q, kv, kv_head, n_keys, scale);
    case KvPrecision::kQ8:
      return online_attention_head<ScalarRow<KvPrecision::kQ8>>(out, q, kv, kv_head, n_keys, scale);
  }
}

AttentionHeadKernel attention_head_kernel() {
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
  const auto head = [&](int64_t h) { kernel(out + h * hd, q + h * hd, kv, h / group, n_keys, scale); };
  if (pool != nullptr && pool->size() > 1 && n_head > 1 && n_keys * hd * n_head >= kParallelWork) {
    pool->for_each(n_head, [&](int64_t h, int) { head(h); });
  } else {
    for (int64_t h = 0; h < n_head; ++h) head(h);
  }
}

}  // namespace tern::kernels::cpu
