// The qwen35 decoder over one batch (model-spec §5), written to read beside the spec: embedding,
// per layer RMSNorm → full attention or Gated DeltaNet → residual → RMSNorm → SwiGLU MLP → residual,
// final norm and head. Every array op goes through a kernels::Ops table; the scalar activations
// (silu, sigmoid, softplus) are the kernels/ref ones.
//
// The batch's tokens are processed as one [n_tokens][d] matrix for every row-wise op; the causal
// ops (attention, conv, GDN) run per item over its own SequenceState. A chunk of more than one token
// uses the chunked GDN form, a single token the recurrent form. Rows are independent, so an item's
// results do not depend on what else is in the batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/ops.h"
#include "model/model.h"
#include "runtime/batch.h"

namespace tern::model {

struct ForwardLimits {
  int64_t max_tokens = 512;      // Σ tokens over a batch
  int64_t max_logit_rows = 512;  // Σ logit rows over a batch
  int64_t gdn_chunk = 64;        // C of the chunked GDN form
};

// Every buffer the forward writes, sized once from the config and the limits, but the head's: those grow
// to the most logit rows a step has asked for (at most limits.max_logit_rows), since a row is a whole
// vocabulary (1 MB at 248k ids) and most callers want one a sequence, not one a token of max_tokens (508 MB
// at 512). So a warm decode loop allocates nothing. Shapes per token (rows = limits.max_tokens).
struct Scratch {
  Scratch(const Config& config, const ForwardLimits& limits, const kernels::Ops& ops);
  // Grows hidden, logits and picks to `rows` logit rows if they are smaller.
  void reserve_logit_rows(int64_t rows);

  ForwardLimits limits;
  int64_t d_model = 0, vocab_size = 0;  // the widths of a logit row's buffers
  std::vector<float> x;                 // [rows][d] residual stream
  std::vector<float> u;                 // [rows][d] normed input of a block
  std::vector<float> rotated;           // [rows][d] T_d(u) (a site output; u stays for ssm_alpha/beta)
  std::vector<float> block;             // [rows][d] a block's output before the residual add
  // attention
  std::vector<float> qg;     // [rows][n_head·2·head_dim]
  std::vector<float> q;      // [rows][n_head·head_dim]
  std::vector<float> gate;   // [rows][n_head·head_dim]
  std::vector<float> k;      // [rows][n_kv·head_dim]
  std::vector<float> v;      // [rows][n_kv·head_dim]
  std::vector<float> o;      // [rows][n_head·head_dim]
  std::vector<double> rope;  // [rows][rope_dim] kernels::ref::rope_angles of each row's position
  // GDN
  std::vector<float> mixed;       // [rows][conv_channels] attn_qkv output (raw conv input)
  std::vector<float> conv;        // [rows][conv_channels] conv + SiLU output
  std::vector<float> gdn_q;       // [rows][n_k·dk]
  std::vector<float> gdn_k;       // [rows][n_k·dk]
  std::vector<float> gdn_v;       // [rows][inner]
  std::vector<float> z;           // [rows][inner] output gate
  std::vector<float> alpha;       // [rows][n_v] then the log-decay g
  std::vector<float> beta;        // [rows][n_v] then σ(b)
  std::vector<float> gdn_o;       // [rows][inner]
  std::vector<float> y;           // [rows][inner]
  std::vector<float> permuted;    // [max(inner, conv_channels)] one row during a head-order permute
  std::vector<double> gdn_chunk;  // ops.gdn_chunked scratch
  // MLP
  std::vector<float> ffn_gate;  // [rows][d_ff]
  std::vector<float> ffn_up;    // [rows][d_ff]
  // head
  std::vector<float> hidden;   // [logit rows][d]
  std::vector<float> logits;   // [logit rows][vocab]
  std::vector<int32_t> picks;  // [logit rows] the head's greedy picks (kernels::Ops::matmul_argmax)
};

// Runs every item's tokens through the decoder, writes each item's logits (BatchItem::logits, into
// scratch.logits) and the picks asked for (BatchItem::argmax), and advances each state. The caller has
// validated the batch (runtime::Engine does): states fit the model, tokens are accepted ids, positions stay
// within capacity, totals within limits.
void forward(const Model& model, const kernels::Ops& ops, std::span<runtime::BatchItem> batch,
             Scratch& scratch);

}  // namespace tern::model
