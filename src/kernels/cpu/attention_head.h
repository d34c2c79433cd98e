// The online-softmax loop shared by the scalar and AVX2 attention kernels (attention_cpu.h), over a
// row policy that supplies, for one KV precision, the dot products of a group of queries with a key row
// and the scaled accumulation of a value row into each query's accumulator. Each kernel file instantiates it
// with policies of its own unnamed namespace, so the instantiations stay inside the file compiled with the
// matching flags.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/ref/attention.h"

namespace tern::kernels::cpu {

// Keys scored together before the maximum is updated: one rescale of the accumulator per block.
inline constexpr int64_t kAttentionKeyBlock = 16;

// Query heads scored against one loaded key (and added from one loaded value) together: the GQA heads
// that share a KV head read each KV row once instead of once per head.
inline constexpr int64_t kAttentionMaxGroup = 6;

// Row::dot(q, n, data, scales, head_dim, row, scores) sets scores[j] = q_j · key row for the n ≤
// kAttentionMaxGroup query heads q_j = q + j·head_dim; Row::add(acc, weights, n, data, scales,
// head_dim, row) does acc_j += weights[j] · value row (acc_j = acc + j·kMaxHeadDim); Row::scale(acc,
// factor, head_dim) multiplies one head's accumulator in place. `row` is position · n_kv + kv_head.
template <class Row>
void online_attention_group(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                            int64_t n_keys, float scale) {
  const int64_t hd = kv.head_dim;
  alignas(64) float acc[kAttentionMaxGroup][ref::kMaxHeadDim];
  float max_score[kAttentionMaxGroup], denom[kAttentionMaxGroup];
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t d = 0; d < hd; ++d) acc[j][d] = 0.0f;
    max_score[j] = -std::numeric_limits<float>::infinity();
    denom[j] = 0.0f;
  }
  float scores[kAttentionKeyBlock][kAttentionMaxGroup];
  float weights[kAttentionMaxGroup];
  for (int64_t t0 = 0; t0 < n_keys; t0 += kAttentionKeyBlock) {
    const int64_t count = n_keys - t0 < kAttentionKeyBlock ? n_keys - t0 : kAttentionKeyBlock;
    for (int64_t i = 0; i < count; ++i) {
      Row::dot(q, n, kv.k, kv.k_scales, hd, (t0 + i) * kv.n_kv + kv_head, scores[i]);
    }
    for (int64_t j = 0; j < n; ++j) {
      float block_max = max_score[j];
      for (int64_t i = 0; i < count; ++i) {
        scores[i][j] *= scale;
        if (scores[i][j] > block_max) block_max = scores[i][j];
      }
      if (block_max > max_score[j]) {
        // exp(−inf) = 0 on the first block: the (zero) accumulator and denominator stay zero.
        const float factor = std::exp(max_score[j] - block_max);
        denom[j] *= factor;
        Row::scale(acc[j], factor, hd);
        max_score[j] = block_max;
      }
    }
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        weights[j] = std::exp(scores[i][j] - max_score[j]);
        denom[j] += weights[j];
      }
      Row::add(acc[0], weights, n, kv.v, kv.v_scales, hd, (t0 + i) * kv.n_kv + kv_head);
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const float inverse = 1.0f / denom[j];
    for (int64_t d = 0; d < hd; ++d) out[j * hd + d] = acc[j][d] * inverse;
  }
}

}  // namespace tern::kernels::cpu
