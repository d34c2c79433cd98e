// The online-softmax loop shared by the scalar and AVX2 attention kernels (attention_cpu.h), over a
// row policy that supplies, for one KV precision, the dot product of the query with a key row and the
// scaled accumulation of a value row. Each kernel file instantiates it with policies of its own
// unnamed namespace, so the instantiations stay inside the file compiled with the matching flags.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/ref/attention.h"

namespace tern::kernels::cpu {

// Keys scored together before the maximum is updated: one rescale of the accumulator per block.
inline constexpr int64_t kAttentionKeyBlock = 16;

// Row::dot(q, data, scales, head_dim, row) → float; Row::add(acc, weight, data, scales, head_dim, row)
// does acc += weight · value row; Row::scale(acc, factor, head_dim) multiplies in place. `row` is
// position · n_kv + kv_head.
template <class Row>
void online_attention_head(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n_keys,
                           float scale) {
  const int64_t hd = kv.head_dim;
  alignas(64) float acc[ref::kMaxHeadDim];
  for (int64_t d = 0; d < hd; ++d) acc[d] = 0.0f;
  float max_score = -std::numeric_limits<float>::infinity();
  float denom = 0.0f;
  float scores[kAttentionKeyBlock];
  for (int64_t t0 = 0; t0 < n_keys; t0 += kAttentionKeyBlock) {
    const int64_t count = n_keys - t0 < kAttentionKeyBlock ? n_keys - t0 : kAttentionKeyBlock;
    float block_max = max_score;
    for (int64_t i = 0; i < count; ++i) {
      scores[i] = Row::dot(q, kv.k, kv.k_scales, hd, (t0 + i) * kv.n_kv + kv_head) * scale;
      if (scores[i] > block_max) block_max = scores[i];
    }
    if (block_max > max_score) {
      // exp(−inf) = 0 on the first block: the (zero) accumulator and denominator stay zero.
      const float factor = std::exp(max_score - block_max);
      denom *= factor;
      Row::scale(acc, factor, hd);
      max_score = block_max;
    }
    for (int64_t i = 0; i < count; ++i) {
      const float weight = std::exp(scores[i] - max_score);
      denom += weight;
      Row::add(acc, weight, kv.v, kv.v_scales, hd, (t0 + i) * kv.n_kv + kv_head);
    }
  }
  const float inverse = 1.0f / denom;
  for (int64_t d = 0; d < hd; ++d) out[d] = acc[d] * inverse;
}

}  // namespace tern::kernels::cpu
