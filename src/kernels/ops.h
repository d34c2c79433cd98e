// The op table the forward pass calls (design.md "Backend"): one implementation per backend, chosen
// once at engine construction. Function pointers, not virtual calls: the table is plain data.
// Shapes and semantics are those of the kernels/ref functions named in each comment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/matrix_view.h"
#include "kernels/ref/attention.h"
#include "kernels/ref/gdn.h"

namespace tern::kernels {

using KvView = ref::KvView;
using GdnDims = ref::GdnDims;
using GdnInputs = ref::GdnInputs;

// A matmul's activation rows: `count` tokens, of which the first `decoding` are decode tokens (each the
// one sampled token of a generating sequence) and the rest prompt tokens. A backend may give the two
// roles different kernels, but a row's result depends only on its role and its own values, never on the
// other rows (cpu: kernels/cpu/pq2_matmul.h).
struct TokenRows {
  int64_t count = 0;
  int64_t decoding = 0;
};

struct Ops {
  const char* name;
  // ref::embedding
  void (*embedding)(float* out, const MatrixView& table, const int32_t* tokens, int64_t n_tokens);
  // ref::matmul over rows.count tokens
  void (*matmul)(float* y, const MatrixView& w, const float* x, TokenRows rows);
  // ref::matmul, and best[t] = ref::argmax of token t's row of y: the head with the greedy pick fused
  // into its pass (a backend folds each row into the pick while the row is still in its cache)
  void (*matmul_argmax)(float* y, int32_t* best, const MatrixView& w, const float* x, TokenRows rows);
  // ref::matmul_shared: several matrices over one activation (q/k/v, qkv/z, gate/up), or each over its own
  // (MatmulTarget::x: qkv/z with the decay projections), taken together
  void (*matmul_shared)(std::span<const MatmulTarget> targets, const float* x, TokenRows rows);
  // ref::site_forward / ref::site_inverse
  void (*site_forward)(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs,
                       int64_t block);
  void (*site_inverse)(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs,
                       int64_t block);
  // ref::silu_values
  void (*silu)(float* out, const float* x, int64_t n);
  // ref::sigmoid_gate
  void (*sigmoid_gate)(float* x, const float* gate, int64_t n);
  // ref::swiglu over n_tokens rows of width, then ref::site_forward on them unless block is 0 (a dense file)
  void (*swiglu_site)(float* gate, const float* up, int64_t n_tokens, int64_t width,
                      std::span<const float> signs, int64_t block);
  // ref::rms_norm / ref::gated_rms_norm / ref::l2_norm
  void (*rms_norm)(float* out, const float* x, const float* gain, int64_t n, float eps);
  void (*gated_rms_norm)(float* out, const float* x, const float* gate, const float* gain, int64_t n,
                         float eps);
  void (*l2_norm)(float* x, int64_t n, float eps);
  // ref::rope_rotate by a position's ref::rope_angles
  void (*rope)(float* x, int64_t rope_dim, const double* cos_sin);
  // ref::attention
  void (*attention)(float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head,
                    float scale);
  // ref::causal_conv
  void (*causal_conv)(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                      int64_t channels, int64_t kernel);
  // ref::gdn_recurrent / ref::gdn_chunked (+ its scratch size)
  void (*gdn_recurrent)(float* out, float* state, const GdnInputs& in, const GdnDims& dims);
  size_t (*gdn_chunked_scratch_size)(const GdnDims& dims, int64_t chunk);
  void (*gdn_chunked)(float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t chunk,
                      std::span<double> scratch);
};

// The fp32 oracle (kernels/ref).
const Ops& reference_ops();

}  // namespace tern::kernels
