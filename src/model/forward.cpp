#include "model/forward.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/ref/activation.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rope.h"
#include "model/gdn_order.h"

namespace tern::model {

namespace {

using kernels::ref::sigmoid;
using kernels::ref::softplus;

size_t sz(int64_t n) {
  return static_cast<size_t>(n);
}

// What every block needs; `n` is the batch's token count, `tokens` the same with their roles.
struct Pass {
  const Model& model;
  const Config& c;
  const kernels::Ops& ops;
  std::span<runtime::BatchItem> batch;
  Scratch& s;
  int64_t n;
  kernels::TokenRows tokens;

  // T_K on each row of a site (model-spec §4.4); nothing for a dense file.
  void site(float* rows, int64_t width, std::span<const float> signs) const {
    const FoldSites& sites = model.sites();
    if (sites.enabled) ops.site_forward(rows, n, width, signs, sites.block);
  }

  // Calls f(item, first_row) for every item, rows in batch order.
  template <class F>
  void for_each_item(F&& f) const {
    int64_t row = 0;
    for (runtime::BatchItem& item : batch) {
      f(item, row);
      row += static_cast<int64_t>(item.tokens.size());
    }
  }
};

// §5.3: u (normed, un-rotated) → out.
void full_attention(const Pass& p, const LayerWeights& layer, float* out) {
  const Config& c = p.c;
  const AttentionWeights& w = layer.attention;
  Scratch& s = p.s;
  const int64_t hd = c.head_dim;
  const int64_t q_width = c.n_head * hd;
  const int64_t kv_width = c.n_head_kv * hd;
  const float eps = static_cast<float>(c.rms_eps);

  std::copy_n(s.u.data(), p.n * c.d_model, s.rotated.data());
  p.site(s.rotated.data(), c.d_model, p.model.sites().model_width);  // one site for q, k, v
  const kernels::MatmulTarget qkv[] = {{s.qg.data(), w.q}, {s.k.data(), w.k}, {s.v.data(), w.v}};
  p.ops.matmul_shared(std::span(qkv), s.rotated.data(), p.tokens);

  for (int64_t r = 0; r < p.n; ++r) {
    for (int64_t h = 0; h < c.n_head; ++h) {  // per head: hd query rows, then hd gate rows
      const float* qg_head = &s.qg[sz(r * 2 * q_width + 2 * h * hd)];
      p.ops.rms_norm(&s.q[sz(r * q_width + h * hd)], qg_head, w.q_norm.data(), hd, eps);
      std::copy_n(qg_head + hd, hd, &s.gate[sz(r * q_width + h * hd)]);
    }
    for (int64_t j = 0; j < c.n_head_kv; ++j) {
      float* kj = &s.k[sz(r * kv_width + j * hd)];
      p.ops.rms_norm(kj, kj, w.k_norm.data(), hd, eps);
    }
  }

  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  p.for_each_item([&](runtime::BatchItem& item, int64_t row0) {
    runtime::SequenceState& state = *item.state;
    const int64_t p0 = state.position();
    const int64_t count = static_cast<int64_t>(item.tokens.size());
    for (int64_t t = 0; t < count; ++t) {
      const int64_t r = row0 + t;
      const double* angles = &s.rope[sz(r * c.rope_dim)];
      for (int64_t h = 0; h < c.n_head; ++h) p.ops.rope(&s.q[sz(r * q_width + h * hd)], c.rope_dim, angles);
      for (int64_t j = 0; j < c.n_head_kv; ++j)
        p.ops.rope(&s.k[sz(r * kv_width + j * hd)], c.rope_dim, angles);
      state.store_kv(layer.slot, p0 + t, &s.k[sz(r * kv_width)], &s.v[sz(r * kv_width)]);
    }
    const kernels::KvView kv = state.kv_view(layer.slot);
    for (int64_t t = 0; t < count; ++t) {
      const int64_t r = row0 + t;
      p.ops.attention(&s.o[sz(r * q_width)], &s.q[sz(r * q_width)], kv, p0 + t + 1, c.n_head, scale);
    }
  });

  p.ops.sigmoid_gate(s.o.data(), s.gate.data(), p.n * q_width);
  p.site(s.o.data(), q_width, p.model.sites().attention_output);
  p.ops.matmul(out, w.output, s.o.data(), p.tokens);
}

// Row r of `rows` (width `width`, head block starting at `offset`) from tiled to grouped head order.
void untile_row(float* row, int64_t offset, const Config& c, int64_t head_size, float* temp) {
  const int64_t n_heads = c.gdn_n_v;
  untile_heads(temp, row + offset, c.gdn_n_k, c.gdn_n_v / c.gdn_n_k, head_size);
  std::copy_n(temp, n_heads * head_size, row + offset);
}

// §5.4, Option B: u (normed, un-rotated) → out.
void gated_delta_net(const Pass& p, const LayerWeights& layer, float* out) {
  const Config& c = p.c;
  const GdnWeights& w = layer.gdn;
  Scratch& s = p.s;
  const int64_t channels = c.gdn_conv_channels();
  const int64_t qk_width = c.gdn_n_k * c.gdn_k_head_dim;
  const int64_t inner = c.gdn_inner;
  const int64_t n_v = c.gdn_n_v;
  const int64_t dk = c.gdn_k_head_dim;
  const int64_t dv = c.gdn_v_head_dim;
  const float eps = static_cast<float>(c.rms_eps);

  std::copy_n(s.u.data(), p.n * c.d_model, s.rotated.data());
  p.site(s.rotated.data(), c.d_model, p.model.sites().model_width);  // one site for qkv and z
  // The decay projections read the un-rotated input (§9.5), in the same pass as qkv and z.
  const kernels::MatmulTarget projections[] = {{s.mixed.data(), w.qkv},
                                               {s.z.data(), w.gate},
                                               {s.alpha.data(), w.alpha, s.u.data()},
                                               {s.beta.data(), w.beta, s.u.data()}};
  p.ops.matmul_shared(std::span(projections), s.rotated.data(), p.tokens);

  // The four tiled projections' outputs into grouped order (weights.h).
  for (int64_t r = 0; r < p.n; ++r) {
    untile_row(&s.mixed[sz(r * channels)], 2 * qk_width, c, dv, s.permuted.data());
    untile_row(&s.z[sz(r * inner)], 0, c, dv, s.permuted.data());
    untile_row(&s.alpha[sz(r * n_v)], 0, c, 1, s.permuted.data());
    untile_row(&s.beta[sz(r * n_v)], 0, c, 1, s.permuted.data());
  }

  p.for_each_item([&](runtime::BatchItem& item, int64_t row0) {
    p.ops.causal_conv(&s.conv[sz(row0 * channels)], &s.mixed[sz(row0 * channels)],
                      item.state->conv_state(layer.slot).data(), w.conv.data(),
                      static_cast<int64_t>(item.tokens.size()), channels, c.conv_kernel);
  });

  const float q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)));
  for (int64_t r = 0; r < p.n; ++r) {
    const float* conv = &s.conv[sz(r * channels)];
    float* q = &s.gdn_q[sz(r * qk_width)];
    float* k = &s.gdn_k[sz(r * qk_width)];
    float* v = &s.gdn_v[sz(r * inner)];
    p.ops.silu(q, conv, qk_width);
    p.ops.silu(k, conv + qk_width, qk_width);
    p.ops.silu(v, conv + 2 * qk_width, inner);
    for (int64_t head = 0; head < c.gdn_n_k; ++head) {
      p.ops.l2_norm(q + head * dk, dk, kernels::ref::kL2NormEps);
      p.ops.l2_norm(k + head * dk, dk, kernels::ref::kL2NormEps);
    }
    for (int64_t i = 0; i < qk_width; ++i) q[i] *= q_scale;
    for (int64_t h = 0; h < n_v; ++h) {
      float& alpha = s.alpha[sz(r * n_v + h)];
      alpha = w.a[sz(h)] * softplus(alpha + w.dt_bias[sz(h)]);  // g: ssm_a is −exp(A_log) already
      float& beta = s.beta[sz(r * n_v + h)];
      beta = sigmoid(beta);
    }
  }

  const kernels::GdnDims dims{c.gdn_n_k, n_v, dk, dv};
  p.for_each_item([&](runtime::BatchItem& item, int64_t row0) {
    const kernels::GdnInputs in{&s.gdn_q[sz(row0 * qk_width)], &s.gdn_k[sz(row0 * qk_width)],
                                &s.gdn_v[sz(row0 * inner)],    &s.alpha[sz(row0 * n_v)],
                                &s.beta[sz(row0 * n_v)],       static_cast<int64_t>(item.tokens.size())};
    float* state = item.state->recurrent_state(layer.slot).data();
    float* o = &s.gdn_o[sz(row0 * inner)];
    if (in.n_tokens == 1) {
      p.ops.gdn_recurrent(o, state, in, dims);
    } else {
      p.ops.gdn_chunked(o, state, in, dims, s.limits.gdn_chunk, s.gdn_chunk);
    }
  });

  for (int64_t r = 0; r < p.n; ++r) {
    for (int64_t h = 0; h < n_v; ++h) {
      const int64_t at = r * inner + h * dv;
      p.ops.gated_rms_norm(&s.y[sz(at)], &s.gdn_o[sz(at)], &s.z[sz(at)], w.norm.data(), dv, eps);
    }
    if (!p.model.weights().ssm_out_grouped) {  // mainline dense files store ssm_out columns tiled (§11.2)
      float* row = &s.y[sz(r * inner)];
      tile_heads(s.permuted.data(), row, c.gdn_n_k, n_v / c.gdn_n_k, dv);
      std::copy_n(s.permuted.data(), inner, row);
    }
  }
  p.site(s.y.data(), inner, p.model.sites().gdn_output);
  p.ops.matmul(out, w.out, s.y.data(), p.tokens);
}

// §5.5: u (normed) → out.
void mlp(const Pass& p, const LayerWeights& layer, float* out) {
  const Config& c = p.c;
  Scratch& s = p.s;
  std::copy_n(s.u.data(), p.n * c.d_model, s.rotated.data());
  p.site(s.rotated.data(), c.d_model, p.model.sites().model_width);  // one site for gate and up
  const kernels::MatmulTarget gate_up[] = {{s.ffn_gate.data(), layer.ffn_gate},
                                           {s.ffn_up.data(), layer.ffn_up}};
  p.ops.matmul_shared(std::span(gate_up), s.rotated.data(), p.tokens);
  const FoldSites& sites = p.model.sites();
  p.ops.swiglu_site(s.ffn_gate.data(), s.ffn_up.data(), p.n, c.d_ff, sites.ffn_inner,
                    sites.enabled ? sites.block : 0);
  p.ops.matmul(out, layer.ffn_down, s.ffn_gate.data(), p.tokens);
}

void add(float* x, const float* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] += y[i];
}

// §5.6: only the wanted rows go through the final norm, the head site and the head, with the greedy
// pick fused into the head's pass where an item asks for it. A step that only advances its states
// (prefill chunks before a prompt's last) runs no head.
void head(const Pass& p, int64_t decoding_logit_rows) {
  const Config& c = p.c;
  const Weights& w = p.model.weights();
  Scratch& s = p.s;
  const int64_t d = c.d_model;
  int64_t logit_rows = 0;
  bool picks_wanted = false;
  for (const runtime::BatchItem& item : p.batch) {
    logit_rows += item.logit_rows();
    picks_wanted |= item.want_argmax && item.logit_rows() > 0;
  }
  if (logit_rows == 0) return;
  s.reserve_logit_rows(logit_rows);
  int64_t out_rows = 0;
  p.for_each_item([&](runtime::BatchItem& item, int64_t row0) {
    const int64_t rows = item.logit_rows();
    const int64_t first = row0 + static_cast<int64_t>(item.tokens.size()) - rows;
    for (int64_t r = 0; r < rows; ++r) {
      p.ops.rms_norm(&s.hidden[sz((out_rows + r) * d)], &s.x[sz((first + r) * d)], w.output_norm.data(), d,
                     static_cast<float>(c.rms_eps));
    }
    item.logits = std::span<const float>(s.logits.data() + out_rows * c.vocab_size, sz(rows * c.vocab_size));
    out_rows += rows;
  });
  if (p.model.sites().enabled)
    p.ops.site_forward(s.hidden.data(), logit_rows, d, p.model.sites().model_width, p.model.sites().block);
  const kernels::TokenRows head_rows{logit_rows, decoding_logit_rows};
  if (!picks_wanted) {
    p.ops.matmul(s.logits.data(), w.output, s.hidden.data(), head_rows);
    return;
  }
  p.ops.matmul_argmax(s.logits.data(), s.picks.data(), w.output, s.hidden.data(), head_rows);
  int64_t end_row = 0;
  for (runtime::BatchItem& item : p.batch) {
    end_row += item.logit_rows();
    if (item.want_argmax && item.logit_rows() > 0) item.argmax = s.picks[sz(end_row - 1)];
  }
}

// A [rows][width] buffer of the scratch and its width.
struct RowBuffer {
  StreamedVector<float> Scratch::*buffer;
  int64_t width;
};

// Every float buffer of a token row, in one list for the constructor and for bytes_at_most.
std::array<RowBuffer, 22> row_buffers(const Config& c) {
  const int64_t q_width = c.n_head * c.head_dim;
  const int64_t kv_width = c.n_head_kv * c.head_dim;
  const int64_t channels = c.gdn_conv_channels();
  const int64_t qk_width = c.gdn_n_k * c.gdn_k_head_dim;
  return {{{&Scratch::x, c.d_model},       {&Scratch::u, c.d_model},     {&Scratch::rotated, c.d_model},
           {&Scratch::block, c.d_model},   {&Scratch::qg, 2 * q_width},  {&Scratch::q, q_width},
           {&Scratch::gate, q_width},      {&Scratch::k, kv_width},      {&Scratch::v, kv_width},
           {&Scratch::o, q_width},         {&Scratch::mixed, channels},  {&Scratch::conv, channels},
           {&Scratch::gdn_q, qk_width},    {&Scratch::gdn_k, qk_width},  {&Scratch::gdn_v, c.gdn_inner},
           {&Scratch::z, c.gdn_inner},     {&Scratch::alpha, c.gdn_n_v}, {&Scratch::beta, c.gdn_n_v},
           {&Scratch::gdn_o, c.gdn_inner}, {&Scratch::y, c.gdn_inner},   {&Scratch::ffn_gate, c.d_ff},
           {&Scratch::ffn_up, c.d_ff}}};
}

size_t gdn_chunk_doubles(const Config& c, const ForwardLimits& l, const kernels::Ops& ops) {
  return ops.gdn_chunked_scratch_size(
      kernels::GdnDims{c.gdn_n_k, c.gdn_n_v, c.gdn_k_head_dim, c.gdn_v_head_dim}, l.gdn_chunk);
}

size_t permuted_floats(const Config& c) {
  return sz(std::max(c.gdn_inner, c.gdn_conv_channels()));
}

}  // namespace

Scratch::Scratch(const Config& c, const ForwardLimits& l, const kernels::Ops& ops) : limits(l) {
  const size_t rows = sz(l.max_tokens);
  for (const RowBuffer& row : row_buffers(c)) (this->*row.buffer).resize(rows * sz(row.width));
  permuted.resize(permuted_floats(c));  // one row, not one a token
  rope.resize(rows * sz(c.rope_dim));
  gdn_chunk.resize(gdn_chunk_doubles(c, l, ops));
  d_model = c.d_model;
  vocab_size = c.vocab_size;
}

uint64_t Scratch::bytes_at_most(const Config& c, const ForwardLimits& l, const kernels::Ops& ops) {
  uint64_t floats = permuted_floats(c);
  for (const RowBuffer& row : row_buffers(c)) floats += sz(l.max_tokens) * sz(row.width);
  floats += sz(l.max_logit_rows) * sz(c.d_model + c.vocab_size);  // hidden and logits
  const uint64_t doubles = sz(l.max_tokens) * sz(c.rope_dim) + gdn_chunk_doubles(c, l, ops);
  return floats * sizeof(float) + doubles * sizeof(double) + sz(l.max_logit_rows) * sizeof(int32_t);
}

void Scratch::reserve_logit_rows(int64_t rows) {
  if (sz(rows) <= picks.size()) return;
  hidden.resize(sz(rows) * sz(d_model));
  logits.resize(sz(rows) * sz(vocab_size));
  picks.resize(sz(rows));
}

void forward(const Model& model, const kernels::Ops& ops, std::span<runtime::BatchItem> batch, Scratch& s) {
  const Config& c = model.config();
  const Weights& w = model.weights();
  const float eps = static_cast<float>(c.rms_eps);
  int64_t n = 0, decoding = 0, decoding_logit_rows = 0;
  for (const runtime::BatchItem& item : batch) {
    n += static_cast<int64_t>(item.tokens.size());
    if (item.decoding) {  // Engine::validate: decode items come first
      decoding = n;
      decoding_logit_rows += item.logit_rows();
    }
  }
  const Pass p{model, c, ops, batch, s, n, {n, decoding}};
  const int64_t d = c.d_model;

  // §5.1: gather, then T_d⁻¹ for a folded table.
  p.for_each_item([&](runtime::BatchItem& item, int64_t row0) {
    ops.embedding(&s.x[sz(row0 * d)], w.token_embd, item.tokens.data(),
                  static_cast<int64_t>(item.tokens.size()));
  });
  if (model.sites().enabled)
    ops.site_inverse(s.x.data(), n, d, model.sites().model_width, model.sites().block);

  // The rotary angles of each row's position, shared by every head of every attention layer.
  p.for_each_item([&](runtime::BatchItem& item, int64_t row0) {
    for (int64_t t = 0; t < static_cast<int64_t>(item.tokens.size()); ++t) {
      kernels::ref::rope_angles(&s.rope[sz((row0 + t) * c.rope_dim)], c.rope_dim, item.state->position() + t,
                                c.rope_theta);
    }
  });

  // §5.2
  for (const LayerWeights& layer : w.layers) {
    for (int64_t r = 0; r < n; ++r)
      ops.rms_norm(&s.u[sz(r * d)], &s.x[sz(r * d)], layer.attn_norm.data(), d, eps);
    if (layer.kind == LayerKind::kFullAttention) {
      full_attention(p, layer, s.block.data());
    } else {
      gated_delta_net(p, layer, s.block.data());
    }
    add(s.x.data(), s.block.data(), n * d);
    for (int64_t r = 0; r < n; ++r) {
      ops.rms_norm(&s.u[sz(r * d)], &s.x[sz(r * d)], layer.post_attention_norm.data(), d, eps);
    }
    mlp(p, layer, s.block.data());
    add(s.x.data(), s.block.data(), n * d);
  }

  head(p, decoding_logit_rows);
  for (runtime::BatchItem& item : batch) item.state->advance(static_cast<int64_t>(item.tokens.size()));
}

}  // namespace tern::model
