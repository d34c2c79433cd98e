// The online-softmax loop shared by the scalar, AVX2 and AVX-512 attention kernels (attention_cpu.h),
// over a block policy that supplies, for one KV precision, the scores of a group of queries against a
// block of keys, the exponentials of a block's shifted scores and the weighted sum of the block's value
// rows into each query's accumulator. Each kernel file instantiates it with policies of its own unnamed
// namespace, so the instantiations stay inside the file compiled with the matching flags.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/ref/attention.h"

namespace tern::kernels::cpu {

// Keys scored together before the maximum is updated: one rescale of the accumulator per block, and
// one vector of scores per query head for the exponentials.
inline constexpr int64_t kAttentionKeyBlock = 16;

// Query heads scored against one loaded key (and added from one loaded value) together: the GQA heads
// that share a KV head read each KV row once instead of once per head.
inline constexpr int64_t kAttentionMaxGroup = 6;

// The vector exponential of the SIMD policies, for arguments in [kExpMin, 0]: e^x = 2^n · e^r with n =
// round(x · log2 e) and r = x − n · ln 2 (ln 2 split in two so n · ln2_hi is exact), |r| ≤ ln 2 / 2, e^r by
// its Taylor polynomial to degree 7 (truncation below 1e-8 relative); 2^n is built in the exponent bits.
// Below kExpMin (where 2^n would leave the normal range) the result is 0.
namespace vector_exp {
inline constexpr float kMin = -87.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// 1/k! for k = 7 down to 2: Horner from the highest degree.
inline constexpr float kTaylor[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 1.0f / 2};
}  // namespace vector_exp

using AttentionBlock = float[kAttentionMaxGroup][kAttentionKeyBlock];

// Where a KV head's rows lie: the row of position t is t · n_kv + kv_head.
struct KvHeadRows {
  const ref::KvView& kv;
  int64_t kv_head;
  int64_t row(int64_t position) const { return position * kv.n_kv + kv_head; }

};

// Block::scores(q, n, rows, t0, count, s) sets s[j][i] = q_j · key(t0 + i) for the n ≤
// kAttentionMaxGroup query heads q_j = q + j·head_dim and i < count ≤ kAttentionKeyBlock;
// Block::scaled_max(x, count, scale) multiplies x[0 .. count) by scale and returns their maximum;
// Block::exp_sum(x, count, max) sets x[i] = exp(x[i] − max) for i < count and 0 beyond, up to
// kAttentionKeyBlock, and returns their sum; Block::add(acc, w, n, rows, t0, count) does acc_j += Σ_i w[j][i]
// · value(t0 + i) (acc_j = acc + j·kMaxHeadDim); Block::scale(acc, factor, head_dim) multiplies one head's
// accumulator in place. No policy reads a key or value at a position of t0 + count or beyond.
template <class Block>
void online_attention_group(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                            int64_t n_keys, float scale) {
  const int64_t hd = kv.head_dim;
  const KvHeadRows rows{kv, kv_head};
  alignas(64) float acc[kAttentionMaxGroup][ref::kMaxHeadDim];
  float max_score[kAttentionMaxGroup], denom[kAttentionMaxGroup];
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t d = 0; d < hd; ++d) acc[j][d] = 0.0f;
    max_score[j] = -std::numeric_limits<float>::infinity();
    denom[j] = 0.0f;
  }
  alignas(64) AttentionBlock block;
  for (int64_t t0 = 0; t0 < n_keys; t0 += kAttentionKeyBlock) {
    const int64_t count = n_keys - t0 < kAttentionKeyBlock ? n_keys - t0 : kAttentionKeyBlock;
    Block::scores(q, n, rows, t0, count, block);
    for (int64_t j = 0; j < n; ++j) {
      const float block_max = Block::scaled_max(block[j], count, scale);
      if (block_max > max_score[j]) {
        // exp(−inf) = 0 on the first block: the (zero) accumulator and denominator stay zero.
        const float factor = std::exp(max_score[j] - block_max);
        denom[j] *= factor;
        Block::scale(acc[j], factor, hd);
        max_score[j] = block_max;
      }
      denom[j] += Block::exp_sum(block[j], count, max_score[j]);
    }
    Block::add(acc[0], block, n, rows, t0, count);
  }
  for (int64_t j = 0; j < n; ++j) {
    const float inverse = 1.0f / denom[j];
    for (int64_t d = 0; d < hd; ++d) out[j * hd + d] = acc[j][d] * inverse;
  }
}

}  // namespace tern::kernels::cpu
