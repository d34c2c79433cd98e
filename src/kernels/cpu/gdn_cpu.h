// The gated delta rule (model-spec §5.4) in fp32 for the CPU backend, same contract as kernels/ref/gdn.h
// (the oracle, in double) up to rounding.
//
// The columns j of a head's state S[i][j] evolve independently of each other,
// so the work splits into (v head, slab of ≤ 128 columns) tasks over the pool, each run by its ISA's
// kernel in blocks of its column_block. Per token a task reads its
// block of S once from memory, computing r = Sᵀk and p = Sᵀq together; then
//   δ = β(v − e^g r),   o = (updated S)ᵀq = e^g p + (k·q) δ,
// and a second sweep, over the block still in cache, writes S ← e^g S + k δᵀ.
//
// Prefill (the op table's gdn_chunked) runs the same recurrence over all its tokens: in fp32 on a CPU the
// chunked form of §5.4 costs more operations per token (≈ 4.5 multiply-adds per state element against 4
// here), and here a task's 16 KiB column block of the state stays in L1 from the first token to the last.
// Measured at the 27B shape on one core, 64 tokens: 13 ms per layer against 23 ms for an fp32 chunked form
// and 233 ms for the double-precision oracle (bench/gdn_bench.cpp).
#pragma once

#include <cstdint>

#include "kernels/ref/gdn.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

using ref::GdnDims;
using ref::GdnInputs;

// State columns per recurrent task: 4 AVX2 vectors, so r and p stay in 8 registers; AVX-512 takes slabs
// of 8 zmm (16 registers for r and p), a whole 27B head.
inline constexpr int64_t kColumnBlock = 32;
inline constexpr int64_t kSlabColumns = 128;

// What one v head reads and writes: token t's q/k at q/k + t·qk_stride, v and out at + t·v_stride,
// g and β at + t·gate_stride; state is the head's [dk][dv] block.
struct GdnHead {
  const float* q = nullptr;
  const float* k = nullptr;
  int64_t qk_stride = 0;
  const float* v = nullptr;
  float* out = nullptr;
  int64_t v_stride = 0;
  const float* g = nullptr;
  const float* beta = nullptr;
  int64_t gate_stride = 0;
  float* state = nullptr;
  int64_t dk = 0;
  int64_t dv = 0;
  int64_t n_tokens = 0;
};

// The per-ISA kernels: the recurrent form over all tokens for state columns [j0, j1) with
// j1 − j0 ≤ column_block.
struct GdnKernels {
  const char* name;
  int64_t column_block;
  void (*recurrent_columns)(const GdnHead& head, int64_t j0, int64_t j1);
};

const GdnKernels& gdn_kernels_scalar();
// Needs AVX2 + FMA (cpu_features().has_avx2_fma()).
const GdnKernels& gdn_kernels_avx2();
// Needs AVX-512 F (cpu_features().has_avx512_vnni() implies it). Same bits as gdn_kernels_avx2().
const GdnKernels& gdn_kernels_avx512();
// The fastest set this CPU runs (after the TERN_ISA cap).
const GdnKernels& gdn_kernels();

// ref::gdn_recurrent in fp32 for any number of tokens (so also ref::gdn_chunked's result), as
// (head, column block) tasks over the pool (null: the caller runs them).
void gdn_recurrent(float* out, float* state, const GdnInputs& in, const GdnDims& dims, ThreadPool* pool,
                   const GdnKernels& kernels);

}  // namespace tern::kernels::cpu
