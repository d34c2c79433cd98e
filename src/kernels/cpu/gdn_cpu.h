// The gated delta rule (model-spec §5.4) in fp32 for the CPU backend, same contract as kernels/ref/gdn.h
// (the oracle, in double) up to rounding.
//
// Recurrent form (decode): the columns j of a head's state S[i][j] evolve independently of each other,
// so the work splits into (v head, block of kColumnBlock columns) tasks over the pool. Per token a task
// reads its block of S once from memory, computing r = Sᵀk and p = Sᵀq together; then
//   δ = β(v − e^g r),   o = (updated S)ᵀq = e^g p + (k·q) δ,
// and a second sweep, over the block still in L1, writes S ← e^g S + k δᵀ.
//
// Chunked form (prefill): one task per v head runs §5.4's chunk algebra in fp32 over a slice of the
// scratch span; the decay factors e^{γ_t−γ_s} are built as running products of e^{g}, so no exp of a
// large cumulative log-decay loses precision.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/ref/gdn.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

using ref::GdnDims;
using ref::GdnInputs;

// State columns per recurrent task: 4 AVX2 vectors, so r and p stay in 8 registers.
inline constexpr int64_t kColumnBlock = 32;

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
// j1 − j0 ≤ kColumnBlock, and the chunked form of one head with chunked_head_scratch_size floats.
struct GdnKernels {
  const char* name;
  void (*recurrent_columns)(const GdnHead& head, int64_t j0, int64_t j1);
  void (*chunked_head)(const GdnHead& head, int64_t chunk, float* scratch);
};

const GdnKernels& gdn_kernels_scalar();
// Needs AVX2 + FMA (cpu_features().has_avx2_fma()).
const GdnKernels& gdn_kernels_avx2();
// The fastest set this CPU runs (after the TERN_ISA cap).
const GdnKernels& gdn_kernels();

// Floats of scratch one head's chunked form needs for chunks of `chunk` tokens.
size_t chunked_head_scratch_size(const GdnDims& dims, int64_t chunk);

// ref::gdn_recurrent in fp32, (head, column block) tasks over the pool (null: the caller runs them).
void gdn_recurrent(float* out, float* state, const GdnInputs& in, const GdnDims& dims, ThreadPool* pool,
                   const GdnKernels& kernels);

// Floats of scratch gdn_chunked needs: one head's share for every v head, so heads run in parallel.
size_t gdn_chunked_scratch_size(const GdnDims& dims, int64_t chunk);

// ref::gdn_chunked in fp32, one task per v head over the pool. Fails with Error(kInternal) if chunk < 1
// or the scratch is smaller than gdn_chunked_scratch_size.
void gdn_chunked(float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t chunk,
                 std::span<float> scratch, ThreadPool* pool, const GdnKernels& kernels);

}  // namespace tern::kernels::cpu
