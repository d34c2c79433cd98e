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

#include "core/huge_pages.h"
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
// at 512). So a warm decode loop allocates nothing. Shapes per token (rows = limits.max_tokens). The buffers
// are streamed storage (core/huge_pages.h): a prompt step's matmuls sweep them a token row at a time, one
// 4 KiB page a row at 27B widths, and on 4 KiB pages those rows missed the TLB.
struct Scratch {
  Scratch(const Config& config, const ForwardLimits& limits, const kernels::Ops& ops);
  // Grows hidden, logits and picks to `rows` logit rows if they are smaller.
  void reserve_logit_rows(int64_t rows);
  // The bytes a Scratch(config, limits, ops) holds at its largest, its head grown to limits.max_logit_rows:
  // the engine checks them against the memory available before it zero-fills them.
  static uint64_t bytes_at_most(const Config& config, const ForwardLimits& limits, const kernels::Ops& ops);

  ForwardLimits limits;
  int64_t d_model = 0, vocab_size = 0;  // the widths of a logit row's buffers
  StreamedVector<float> x;              // [rows][d] residual stream
  StreamedVector<float> u;              // [rows][d] normed input of a block
  StreamedVector<float> rotated;        // [rows][d] T_d(u) (a site output; u stays for ssm_alpha/beta)
  StreamedVector<float> block;          // [rows][d] a block's output before the residual add
  // attention
  StreamedVector<float> qg;    // [rows][n_head·2·head_dim]
  StreamedVector<float> q;     // [rows][n_head·head_dim]
  StreamedVector<float> gate;  // [rows][n_head·head_dim]
  StreamedVector<float> k;     // [rows][n_kv·head_dim]
  StreamedVector<float> v;     // [rows][n_kv·head_dim]
  StreamedVector<float> o;     // [rows][n_head·head_dim]
  std::vector<double> rope;    // [rows][rope_dim] kernels::ref::rope_angles of each row's position
  // GDN
  StreamedVector<float> mixed;     // [rows][conv_channels] attn_qkv output (raw conv input)
  StreamedVector<float> conv;      // [rows][conv_channels] conv + SiLU output
  StreamedVector<float> gdn_q;     // [rows][n_k·dk]
  StreamedVector<float> gdn_k;     // [rows][n_k·dk]
  StreamedVector<float> gdn_v;     // [rows][inner]
  StreamedVector<float> z;         // [rows][inner] output gate
  StreamedVector<float> alpha;     // [rows][n_v] then the log-decay g
  StreamedVector<float> beta;      // [rows][n_v] then σ(b)
  StreamedVector<float> gdn_o;     // [rows][inner]
  StreamedVector<float> y;         // [rows][inner]
  StreamedVector<float> permuted;  // [max(inner, conv_channels)] one row during a head-order permute
  std::vector<double> gdn_chunk;   // ops.gdn_chunked scratch
  // MLP
  StreamedVector<float> ffn_gate;  // [rows][d_ff]
  StreamedVector<float> ffn_up;    // [rows][d_ff]
  // head
  StreamedVector<float> hidden;  // [logit rows][d]
  StreamedVector<float> logits;  // [logit rows][vocab]
  std::vector<int32_t> picks;    // [logit rows] the head's greedy picks (kernels::Ops::matmul_argmax)
};

// Runs every item's tokens through the decoder, writes each item's logits (BatchItem::logits, into
// scratch.logits) and the picks asked for (BatchItem::argmax), and advances each state. The caller has
// validated the batch (runtime::Engine does): states fit the model, tokens are accepted ids, positions stay
// within capacity, totals within limits.
void forward(const Model& model, const kernels::Ops& ops, std::span<runtime::BatchItem> batch,
             Scratch& scratch);

}  // namespace tern::model
