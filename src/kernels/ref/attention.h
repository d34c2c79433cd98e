// Causal grouped-query attention of one query row over a sequence's KV cache (model-spec §5.3).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// How a KV cache stores keys and values. kQ8: for each position and KV head, the head_dim values in
// groups of kQ8Group, each group int8 codes q with one fp32 scale s = max|x| / 127 (0 for an all-zero
// group), q = x / s rounded to nearest (ties away from zero) and clamped to ±127; a value reads back as
// q · s. A head_dim that is not a multiple of kQ8Group ends in one shorter group.
enum class KvPrecision { kF16, kF32, kQ8 };
inline constexpr int64_t kQ8Group = 32;

// Bytes of one stored key or value element (a kQ8 code; its group scales lie apart).
inline constexpr int64_t kv_element_bytes(KvPrecision precision) {
  return precision == KvPrecision::kF16 ? 2 : precision == KvPrecision::kF32 ? 4 : 1;
}

// Scale groups of one head of head_dim values in the kQ8 layout.
inline constexpr int64_t q8_groups(int64_t head_dim) {
  return (head_dim + kQ8Group - 1) / kQ8Group;
}

// Quantises one head (n = head_dim values) to kQ8: codes[n], scales[q8_groups(n)].
void quantize_q8_head(const float* x, int64_t n, int8_t* codes, float* scales);

// Positions per block of a KV cache. A cache is laid out in blocks of kKvBlockPositions positions,
// [block][n_kv][kKvBlockPositions][head_dim], so the rows one KV head reads in a block lie next to each
// other and a block of every head is one contiguous range: decode attention, which takes the heads one
// after the other, then reads in address order, where the hardware prefetchers keep up (from memory ≈
// 1.5× faster on one Zen 3 core than rows [position][n_kv][head_dim], docs/performance.md).
inline constexpr int64_t kKvBlockPositions = 16;

// The row (head_dim elements; for kQ8 also q8_groups(head_dim) scales) of `position` and KV head `head`.
inline constexpr int64_t kv_row(int64_t position, int64_t head, int64_t n_kv) {
  return (position / kKvBlockPositions * n_kv + head) * kKvBlockPositions + position % kKvBlockPositions;
}

// `positions` rounded up to whole blocks: the positions a cache of that many spans.
inline constexpr int64_t kv_block_positions(int64_t positions) {
  return (positions + kKvBlockPositions - 1) / kKvBlockPositions * kKvBlockPositions;
}

// Rows a cache of `positions` positions spans.
inline constexpr int64_t kv_rows(int64_t positions, int64_t n_kv) {
  return kv_block_positions(positions) * n_kv;
}

// One layer's cache: keys and values in rows of head_dim elements at kv_row(position, head, n_kv), as fp16
// bits, fp32 or int8 codes; for kQ8, k_scales and v_scales hold each row's q8_groups(head_dim) fp32
// scales at the same row index.
struct KvView {
  const void* k = nullptr;
  const void* v = nullptr;
  KvPrecision precision = KvPrecision::kF16;
  int64_t n_kv = 0;
  int64_t head_dim = 0;
  const float* k_scales = nullptr;
  const float* v_scales = nullptr;
};

// Largest head_dim the oracle handles (its accumulator lives on the stack); the loader refuses more.
inline constexpr int64_t kMaxHeadDim = 1024;

// q: [n_head][head_dim], out: [n_head][head_dim]. Query head h reads KV head h / (n_head / n_kv) and
// the keys at positions 0 .. n_keys−1 (the caller passes pos + 1: causal). Scores q·k·scale, softmax
// with max subtraction, and the weighted sum of values, all in double; two passes over the keys so no
// score buffer is needed.
void attention(float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head, float scale);

}  // namespace tern::kernels::ref
