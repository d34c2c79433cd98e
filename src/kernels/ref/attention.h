// Causal grouped-query attention of one query row over a sequence's KV cache (model-spec §5.3).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// One layer's cache: rows [position][n_kv][head_dim], keys and values stored as fp16 bits or fp32.
struct KvView {
  const void* k = nullptr;
  const void* v = nullptr;
  bool fp16 = true;
  int64_t n_kv = 0;
  int64_t head_dim = 0;
};

// Largest head_dim the oracle handles (its accumulator lives on the stack); the loader refuses more.
inline constexpr int64_t kMaxHeadDim = 1024;

// q: [n_head][head_dim], out: [n_head][head_dim]. Query head h reads KV head h / (n_head / n_kv) and
// the keys at positions 0 .. n_keys−1 (the caller passes pos + 1: causal). Scores q·k·scale, softmax
// with max subtraction, and the weighted sum of values, all in double; two passes over the keys so no
// score buffer is needed.
void attention(float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head, float scale);

}  // namespace tern::kernels::ref
