// The gated delta rule of the GDN block (model-spec §5.4), in its recurrent form (one token at a
// time, the definition) and its chunked-parallel form (prefill). Both take the same inputs and leave
// the same state, up to rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tern::kernels::ref {

struct GdnDims {
  int64_t n_k = 0;  // q/k heads
  int64_t n_v = 0;  // v heads, a multiple of n_k; v head h reads q/k head h / (n_v / n_k) (grouped order)
  int64_t dk = 0;   // q/k head dim
  int64_t dv = 0;   // v head dim
};

// Inputs for n_tokens consecutive tokens of one sequence and one layer:
//   q, k: [n_tokens][n_k][dk]  (q L2-normed and scaled by 1/sqrt(dk); k L2-normed)
//   v:    [n_tokens][n_v][dv]
//   g:    [n_tokens][n_v]      log-decay, ≤ 0
//   beta: [n_tokens][n_v]
//   state: [n_v][dk][dv] fp32, S[i][j] with i over k dims; updated in place
//   out:  [n_tokens][n_v][dv]
struct GdnInputs {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const float* g = nullptr;
  const float* beta = nullptr;
  int64_t n_tokens = 0;
};

// Per token and head: S ← e^g S; r = Sᵀk; δ = β(v − r); S ← S + k δᵀ; o = Sᵀq (the updated S).
// Dot products in double; the state is rounded to fp32 after every token.
void gdn_recurrent(float* out, float* state, const GdnInputs& in, const GdnDims& dims);

// Doubles of scratch gdn_chunked needs for chunks of `chunk` tokens.
size_t gdn_chunked_scratch_size(const GdnDims& dims, int64_t chunk);

// The chunked form of §5.4: per head and per chunk of `chunk` tokens (the last one may be shorter),
// the decay matrix, (I + A)⁻¹ by forward substitution, the chunk's outputs and the next state, all
// in double; the state is rounded to fp32 once per chunk.
void gdn_chunked(float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t chunk,
                 std::span<double> scratch);

}  // namespace tern::kernels::ref
