// The CPU backend's attention (the contract of kernels::ref::attention: one query row, causal GQA over
// an fp16, fp32 or q8 KV cache) in fp32 with an online softmax: keys are read once, in blocks whose
// scores raise the running maximum and rescale the accumulator before their values are added, so
// neither a second pass nor a score buffer is needed. The keys are cut into ranges spread over the pool
// (split-K), each range streaming every KV head's rows position by position, and the ranges' partial
// results are merged by their maxima.
#pragma once

#include <cstdint>

#include "kernels/ref/attention.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

// The query heads of KV heads [kv_first, kv_first + kv_count) (query head h reads KV head h / group)
// against the keys at positions [t_begin, t_end); q is the whole row, [n_head][head_dim].
struct AttentionSpan {
  const float* q = nullptr;
  const ref::KvView* kv = nullptr;
  int64_t group = 1;
  int64_t kv_first = 0, kv_count = 0;
  int64_t t_begin = 0, t_end = 0;
  float scale = 1.0f;
};

// A span's unnormalised result for its kv_count · group query heads: per head the largest scaled score
// `max`, denom = Σ_t e^(s_t − max) and acc[head_dim] = Σ_t e^(s_t − max) · v_t.
struct AttentionPartial {
  float* acc = nullptr;
  float* max = nullptr;
  float* denom = nullptr;
};

using AttentionHeadKernel = void (*)(const AttentionSpan& span, const AttentionPartial& out);

void attention_head_scalar(const AttentionSpan& span, const AttentionPartial& out);
void attention_head_avx2(const AttentionSpan& span, const AttentionPartial& out);
void attention_head_avx512(const AttentionSpan& span, const AttentionPartial& out);

// Whether the CPU runs attention_head_avx512 (AVX-512 F, BW and VL).
bool attention_avx512_supported();

// The widest kernel the CPU runs (core/cpu_features.h, TERN_ISA respected): AVX-512, else AVX2 + FMA +
// F16C, else scalar.
AttentionHeadKernel attention_head_kernel();

// ref::attention's signature plus the pool (null: this thread alone); small problems stay on the
// calling thread. Throws Error(kInternal) for a head_dim above ref::kMaxHeadDim or a head count that
// is not a multiple of the KV heads.
void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool);
void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool, AttentionHeadKernel kernel);
// The same with the keys cut into `chunks` ranges (fewer where there are not that many key blocks) computed
// apart and merged, the split the versions above pick from the pool's size and the key count.
void attention(float* out, const float* q, const ref::KvView& kv, int64_t n_keys, int64_t n_head, float scale,
               ThreadPool* pool, AttentionHeadKernel kernel, int64_t chunks);

}  // namespace tern::kernels::cpu
