// The CPU backend's attention (the contract of kernels::ref::attention: one query row, causal GQA over
// an fp16, fp32 or q8 KV cache) in fp32 with an online softmax: keys are read once, in blocks whose
// scores raise the running maximum and rescale the accumulator before their values are added, so
// neither a second pass nor a score buffer is needed. Query heads are split over the pool.
#pragma once

#include <cstdint>

#include "kernels/ref/attention.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

// n ≤ kAttentionMaxGroup (attention_head.h) query heads q[n][head_dim] that share KV head `kv_head`,
// keys 0 .. n_keys−1, into out[n][head_dim].
using AttentionHeadKernel = void (*)(float* out, const float* q, const ref::KvView& kv, int64_t kv_head,
                                     int64_t n, int64_t n_keys, float scale);

void attention_head_scalar(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                           int64_t n_keys, float scale);
void attention_head_avx2(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                         int64_t n_keys, float scale);
void attention_head_avx512(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                           int64_t n_keys, float scale);

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

}  // namespace tern::kernels::cpu
