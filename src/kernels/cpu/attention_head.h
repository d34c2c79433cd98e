// The online-softmax loop shared by the scalar, AVX2 and AVX-512 attention kernels (attention_cpu.h),
// over a block policy that supplies, for one KV precision, the scores of a group of queries against a
// block of keys, the exponentials of a block's shifted scores and the weighted sum of the block's value
// rows into each query's accumulator. Each kernel file instantiates it with policies of its own unnamed
// namespace, so the instantiations stay inside the file compiled with the matching flags.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/attention_cpu.h"
#include "kernels/cpu/vector_exp.h"
#include "kernels/ref/attention.h"

namespace tern::kernels::cpu {

// Keys scored together before the maximum is updated: one rescale of the accumulator per block, and
// one vector of scores per query head for the exponentials. One block of the cache's layout, so a head's
// keys of a block are one contiguous run.
inline constexpr int64_t kAttentionKeyBlock = ref::kKvBlockPositions;

// Query heads scored against one loaded key (and added from one loaded value) together: the GQA heads
// that share a KV head read each KV row once instead of once per head.
inline constexpr int64_t kAttentionMaxGroup = 6;

// Calls f(std::integral_constant<int, N>{}) with N = n (n ≥ kAttentionMaxGroup gives the largest), so a
// block policy instantiates its per-group-size kernels from one switch.
template <class F>
void with_group_size(int64_t n, F&& f) {
  switch (n) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    default:
      return f(std::integral_constant<int, kAttentionMaxGroup>{});
  }
}

using AttentionBlock = float[kAttentionMaxGroup][kAttentionKeyBlock];

// Where a KV head's rows lie (ref::kv_row). `ahead` is the distance in bytes from a row of the current key
// block to the same row one block later, 0 in a span's last block.
struct KvHeadRows {
  const ref::KvView& kv;
  int64_t kv_head;
  int64_t ahead = 0;
  int64_t element_bytes = ref::kv_element_bytes(kv.precision);
  int64_t row(int64_t position) const { return ref::kv_row(position, kv_head, kv.n_kv); }

  // Asks L1 for the cache lines that start within elements [first, first + count) from `data` (a row or
  // the whole cache), one key block later. The policies call this as they load those elements, so the
  // requests trickle out one per line read and the next block arrives while this one is computed. Requesting
  // a whole block at once, at its start, filled the line-fill buffers and stalled the loads queued behind
  // them: no faster than the hardware prefetchers alone (≈ 4.2 GB/s a core from memory, against ≈ 7.7
  // trickled; bench/attention_bench.cpp).
  void prefetch_next(const void* data, int64_t first, int64_t count) const {
    if (ahead == 0) return;
    const auto begin = reinterpret_cast<uintptr_t>(data) + static_cast<uintptr_t>(first * element_bytes);
    const auto end = begin + static_cast<uintptr_t>(count * element_bytes);
    for (uintptr_t line = (begin + 63) & ~uintptr_t{63}; line < end; line += 64)
      __builtin_prefetch(reinterpret_cast<const char*>(line + static_cast<uintptr_t>(ahead)), 0, 3);
  }

  // The line that holds element `first` of `data`, one key block later, for a policy that steps through
  // its rows a line at a time: one address and no loop per line. Into L2, not L1: the next block of a
  // span of four heads (64 KiB of keys and values at fp16) is larger than L1, so L1 requests evicted lines
  // of this block before they were read (AVX-512 with a pool of 2 from memory: ≈ 31 → 34 GB/s).
  void prefetch_line(const void* data, int64_t first) const {
    if (ahead == 0) return;
    __builtin_prefetch(static_cast<const char*>(data) + first * element_bytes + ahead, 0, 2);
  }
};

// Block::scores(q, n, rows, t0, count, s) sets s[j][i] = q_j · key(t0 + i) for the n ≤
// kAttentionMaxGroup query heads q_j = q + j·head_dim and i < count ≤ kAttentionKeyBlock;
// Block::scaled_max(x, count, scale) multiplies x[0 .. count) by scale and returns their maximum;
// Block::exp_sum(x, count, max) sets x[i] = exp(x[i] − max) for i < count and 0 beyond, up to
// kAttentionKeyBlock, and returns their sum; Block::add(acc, w, n, rows, t0, count) does acc_j += Σ_i w[j][i]
// · value(t0 + i) (acc_j = acc + j·head_dim); Block::scale(acc, factor, head_dim) multiplies one head's
// accumulator in place. No policy reads a key or value at a position of t0 + count or beyond; scores and add
// pass every row's elements they load to rows.prefetch_next (or each line of them to rows.prefetch_line).
//
// Key block by key block, every KV head of the span in turn: a block of one head is a contiguous run of
// the cache (ref::kv_row) and the next head's run follows it, so a span reads in address order.
template <class Block>
void online_attention_span(const AttentionSpan& span, const AttentionPartial& out) {
  const ref::KvView& kv = *span.kv;
  const int64_t hd = kv.head_dim;
  const int64_t heads = span.kv_count * span.group;
  for (int64_t i = 0; i < heads; ++i) {
    for (int64_t d = 0; d < hd; ++d) out.acc[i * hd + d] = 0.0f;
    out.max[i] = -std::numeric_limits<float>::infinity();
    out.denom[i] = 0.0f;
  }
  const float* q = span.q + span.kv_first * span.group * hd;
  alignas(64) AttentionBlock block;
  const int64_t block_bytes = kAttentionKeyBlock * kv.n_kv * hd * ref::kv_element_bytes(kv.precision);
  for (int64_t t0 = span.t_begin; t0 < span.t_end; t0 += kAttentionKeyBlock) {
    const int64_t count = span.t_end - t0 < kAttentionKeyBlock ? span.t_end - t0 : kAttentionKeyBlock;
    for (int64_t h = 0; h < span.kv_count; ++h) {
      const KvHeadRows rows{kv, span.kv_first + h, t0 + kAttentionKeyBlock < span.t_end ? block_bytes : 0};
      for (int64_t first = h * span.group; first < (h + 1) * span.group; first += kAttentionMaxGroup) {
        const int64_t n = (h + 1) * span.group - first < kAttentionMaxGroup ? (h + 1) * span.group - first
                                                                            : kAttentionMaxGroup;
        Block::scores(q + first * hd, n, rows, t0, count, block);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t i = first + j;
          const float block_max = Block::scaled_max(block[j], count, span.scale);
          if (block_max > out.max[i]) {
            // exp(−inf) = 0 on the first block: the (zero) accumulator and denominator stay zero.
            const float factor = std::exp(out.max[i] - block_max);
            out.denom[i] *= factor;
            Block::scale(out.acc + i * hd, factor, hd);
            out.max[i] = block_max;
          }
          out.denom[i] += Block::exp_sum(block[j], count, out.max[i]);
        }
        Block::add(out.acc + first * hd, block, n, rows, t0, count);
      }
    }
  }
}

}  // namespace tern::kernels::cpu
