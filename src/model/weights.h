// Every tensor of a qwen35 file bound to its role (model-spec §2.7), checked against the Config and
// the Hadamard contract.
//
// Storage policy: matrices stay packed and zero-copy (views into the mmap, any type the kernels
// read). Only the small per-channel F32 tensors are copied into owned fp32 vectors (norm gains,
// ssm_a, ssm_dt.bias, ssm_conv1d: about 0.1 % of the weights), which also decodes F16/BF16 and keeps
// them aligned.
//
// GDN V-head order (§4.5): tern computes in grouped (HF) order, Option B. The three tiled per-head
// vectors (ssm_a, ssm_dt.bias, the V channels of ssm_conv1d) are un-tiled when copied. The four tiled
// matrices (V rows of attn_qkv, attn_gate, ssm_alpha, ssm_beta) stay as stored; the forward un-tiles
// their *outputs* (a row permutation of W is the same permutation of W·x), which keeps them packed.
// ssm_out reads grouped columns when the contract says gdn_v_grouped; otherwise (mainline llama.cpp
// dense files, §11.2) its columns are tiled and the forward re-tiles its input.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/reader.h"
#include "hadamard/contract.h"
#include "kernels/matrix_view.h"
#include "model/config.h"

namespace tern::model {

struct AttentionWeights {
  kernels::MatrixView q;  // [d, n_head·2·head_dim]: per head, head_dim query rows then head_dim gate rows
  kernels::MatrixView k;  // [d, n_kv·head_dim]
  kernels::MatrixView v;  // [d, n_kv·head_dim]
  kernels::MatrixView output;  // [n_head·head_dim, d]
  std::vector<float> q_norm;   // [head_dim], stored 1 + w
  std::vector<float> k_norm;   // [head_dim], stored 1 + w
};

struct GdnWeights {
  kernels::MatrixView qkv;     // [d, conv_channels]: q | k | v, v rows tiled in the file
  kernels::MatrixView gate;    // [d, inner], rows tiled
  kernels::MatrixView alpha;   // [d, n_v], rows tiled; reads the un-rotated normed input
  kernels::MatrixView beta;    // [d, n_v], rows tiled; reads the un-rotated normed input
  kernels::MatrixView out;     // [inner, d]; columns grouped iff Weights::ssm_out_grouped
  std::vector<float> conv;     // [conv_channels][conv_kernel], V channels grouped
  std::vector<float> a;        // [n_v] = −exp(A_log) as stored, grouped; used directly (§9.2)
  std::vector<float> dt_bias;  // [n_v], grouped
  std::vector<float> norm;     // [v_head_dim], stored raw (no +1), shared by every head
};

struct LayerWeights {
  LayerKind kind = LayerKind::kGatedDeltaNet;
  int64_t slot = 0;              // index among the layers of the same kind: KV cache slot or GDN state slot
  std::vector<float> attn_norm;  // [d], stored 1 + w
  std::vector<float> post_attention_norm;  // [d], stored 1 + w
  AttentionWeights attention;              // bound when kind == kFullAttention
  GdnWeights gdn;                          // bound when kind == kGatedDeltaNet
  kernels::MatrixView ffn_gate;            // [d, d_ff]
  kernels::MatrixView ffn_up;              // [d, d_ff]
  kernels::MatrixView ffn_down;            // [d_ff, d]
};

struct Weights {
  kernels::MatrixView token_embd;  // [d, vocab]; rows are T_d(e) when folded (§4.2)
  kernels::MatrixView output;      // [d, vocab]
  std::vector<float> output_norm;  // [d], stored 1 + w
  std::vector<LayerWeights> layers;
  bool ssm_out_grouped = false;  // prism.hadamard.gdn_v_grouped
};

// Calls f on every matrix view of the weights (the head once even when it is tied to the embedding).
template <class F>
void for_each_matrix(Weights& w, F&& f) {
  f(w.token_embd);
  f(w.output);
  for (LayerWeights& layer : w.layers) {
    for (kernels::MatrixView* m :
         {&layer.attention.q, &layer.attention.k, &layer.attention.v, &layer.attention.output, &layer.gdn.qkv,
          &layer.gdn.gate, &layer.gdn.alpha, &layer.gdn.beta, &layer.gdn.out, &layer.ffn_gate, &layer.ffn_up,
          &layer.ffn_down}) {
      f(*m);
    }
  }
}

// Throws Error(kConfig) naming the tensor for a missing tensor, a wrong shape or type, or a tensor
// with no role; Error(kContract) when a folded role's tensor is not listed in the contract (or an
// unfolded one is), or a ternary tensor appears without a contract; Error(kUnsupported) for
// geometries the forward does not implement.
Weights bind_weights(const gguf::Reader& file, const Config& config, const hadamard::Contract* contract);

}  // namespace tern::model
