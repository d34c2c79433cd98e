#include "model/weights.h"

#include <optional>
#include <set>
#include <string>

#include "core/error.h"
#include "kernels/ref/attention.h"
#include "model/gdn_order.h"
#include "quant/codec.h"

namespace tern::model {

namespace {

enum class Fold { kNone, kForward, kInverse };

bool is_float_type(quant::TensorType type) {
  return type == quant::TensorType::kF32 || type == quant::TensorType::kF16 ||
         type == quant::TensorType::kBF16;
}

class Binder {
 public:
  Binder(const gguf::Reader& file, const hadamard::Contract* contract) : file_(file), contract_(contract) {}

  // A 2-D weight of shape [cols, rows], bound in place.
  kernels::MatrixView matrix(const std::string& name, int64_t cols, int64_t rows, Fold fold) {
    const gguf::TensorInfo& t = take(name);
    if (t.n_dims != 2 || t.ne[0] != cols || t.ne[1] != rows) {
      fail(ErrorKind::kConfig, "{}: tensor {} has shape {}, expected [{}, {}]", file_.name(), name, shape(t),
           cols, rows);
    }
    check_fold(t, fold);
    const std::optional<size_t> row_bytes = quant::row_bytes(t.type, cols);
    if (!row_bytes || *row_bytes * static_cast<uint64_t>(rows) != t.data.size()) {
      fail(ErrorKind::kConfig, "{}: tensor {} of type {} cannot hold rows of {} values", file_.name(), name,
           quant::traits(t.type).name, cols);
    }
    return kernels::MatrixView{t.type, t.data.data(), cols, rows, *row_bytes};
  }

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

  // A float tensor of exactly `ne` (1-D or 2-D), decoded into an owned fp32 vector.
  std::vector<float> floats(const std::string& name, std::initializer_list<int64_t> ne) {
    const gguf::TensorInfo& t = take(name);
    bool match = t.n_dims == ne.size();
    size_t i = 0;
    for (int64_t n : ne) match = match && t.ne[i++] == n;
    if (!match)
      fail(ErrorKind::kConfig, "{}: tensor {} has shape {}, expected {}", file_.name(), name, shape(t),
           fmt_ne(ne));
    if (!is_float_type(t.type)) {
      fail(ErrorKind::kConfig, "{}: tensor {} has type {}, expected f32, f16 or bf16", file_.name(), name,
           quant::traits(t.type).name);
    }
    check_fold(t, Fold::kNone);
    std::vector<float> out(static_cast<size_t>(t.elements()));
    quant::dequantize_row(t.type, t.data.data(), out.data(), t.elements());
    return out;
  }

  // Every tensor of the file must have been bound, except the trailing MTP blocks (§11.4).
  void check_all_bound(int64_t n_layer) const {
    for (const gguf::TensorInfo& t : file_.tensors()) {
      if (bound_.count(t.name) != 0 || is_mtp_block(t.name, n_layer)) continue;
      fail(ErrorKind::kConfig, "{}: tensor {} has no role in a qwen35 decoder", file_.name(), t.name);
    }
  }

 private:
  const gguf::TensorInfo& take(const std::string& name) {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (t == nullptr) fail(ErrorKind::kConfig, "{}: missing tensor {}", file_.name(), name);
    bound_.insert(name);
    return *t;
  }

  void check_fold(const gguf::TensorInfo& t, Fold fold) const {
    if (contract_ == nullptr) {
      if (quant::is_ternary(t.type)) {
        fail(ErrorKind::kContract, "{}: ternary tensor {} in a file without a prism.hadamard contract",
             file_.name(), t.name);
      }
      return;
    }
    const bool forward = contract_->is_folded(t.name);
    const bool inverse = contract_->is_inverse(t.name);
    if (forward != (fold == Fold::kForward) || inverse != (fold == Fold::kInverse)) {
      const char* expected = fold == Fold::kForward   ? "prism.hadamard.weight_names"
                             : fold == Fold::kInverse ? "prism.hadamard.inverse_weight_names"
                                                      : "neither fold list";
      fail(ErrorKind::kContract, "{}: tensor {} must be listed in {} (model-spec §4.4)", file_.name(), t.name,
           expected);
    }
    if (fold == Fold::kForward && contract_->explicit_signs) (void)contract_->signs_for(t.ne[0]);
  }

  static bool is_mtp_block(const std::string& name, int64_t n_layer) {
    if (name.rfind("blk.", 0) != 0) return false;
    const size_t dot = name.find('.', 4);
    if (dot == std::string::npos || dot == 4) return false;
    int64_t layer = 0;
    for (size_t i = 4; i < dot; ++i) {
      if (name[i] < '0' || name[i] > '9' || layer > 1'000'000) return false;
      layer = layer * 10 + (name[i] - '0');
    }
    return layer >= n_layer;
  }

  static std::string fmt_ne(std::initializer_list<int64_t> ne) {
    std::string s = "[";
    for (int64_t n : ne) s += (s.size() > 1 ? ", " : "") + std::to_string(n);
    return s + "]";
  }
  static std::string shape(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (uint32_t i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
    return s + "]";
  }

  const gguf::Reader& file_;
  const hadamard::Contract* contract_;
  std::set<std::string> bound_;
};

void check_geometry(const gguf::Reader& file, const Config& c) {
  auto require = [&](bool ok, const char* what) {
    if (!ok) fail(ErrorKind::kUnsupported, "{}: unsupported qwen35 geometry: {}", file.name(), what);
  };
  require(c.n_layer > 0 && c.d_model > 0 && c.d_ff > 0 && c.vocab_size > 0, "empty dimension");
  require(c.n_layer == static_cast<int64_t>(c.layers.size()), "layer schedule length != layers");
  require(c.n_head > 0 && c.n_head_kv > 0 && c.n_head % c.n_head_kv == 0,
          "n_head not a multiple of n_head_kv");
  require(c.head_dim > 0 && c.head_dim <= kernels::ref::kMaxHeadDim, "head_dim out of range");
  require(c.value_dim == c.head_dim, "attention.value_length != key_length");
  require(c.rope_dim >= 0 && c.rope_dim % 2 == 0 && c.rope_dim <= c.head_dim, "rope dims odd or > head_dim");
  require(c.gdn_n_k > 0 && c.gdn_n_v > 0 && c.gdn_n_v % c.gdn_n_k == 0,
          "ssm.time_step_rank not a multiple of group_count");
  require(c.gdn_k_head_dim > 0 && c.gdn_v_head_dim > 0 && c.gdn_v_head_dim * c.gdn_n_v == c.gdn_inner,
          "ssm.inner_size != time_step_rank × v head dim");
  require(c.conv_kernel >= 1, "ssm.conv_kernel < 1");
}

AttentionWeights bind_attention(Binder& b, const std::string& p, const Config& c) {
  AttentionWeights w;
  const int64_t q_width = c.n_head * c.head_dim;
  const int64_t kv_width = c.n_head_kv * c.head_dim;
  w.q = b.matrix(p + "attn_q.weight", c.d_model, 2 * q_width, Fold::kForward);
  w.k = b.matrix(p + "attn_k.weight", c.d_model, kv_width, Fold::kForward);
  w.v = b.matrix(p + "attn_v.weight", c.d_model, kv_width, Fold::kForward);
  w.output = b.matrix(p + "attn_output.weight", q_width, c.d_model, Fold::kForward);
  w.q_norm = b.floats(p + "attn_q_norm.weight", {c.head_dim});
  w.k_norm = b.floats(p + "attn_k_norm.weight", {c.head_dim});
  return w;
}

GdnWeights bind_gdn(Binder& b, const std::string& p, const Config& c) {
  GdnWeights w;
  const int64_t channels = c.gdn_conv_channels();
  const int64_t qk_channels = 2 * c.gdn_n_k * c.gdn_k_head_dim;
  const int64_t n_k = c.gdn_n_k;
  const int64_t rep = c.gdn_n_v / c.gdn_n_k;
  w.qkv = b.matrix(p + "attn_qkv.weight", c.d_model, channels, Fold::kForward);
  w.gate = b.matrix(p + "attn_gate.weight", c.d_model, c.gdn_inner, Fold::kForward);
  w.alpha = b.matrix(p + "ssm_alpha.weight", c.d_model, c.gdn_n_v, Fold::kNone);
  w.beta = b.matrix(p + "ssm_beta.weight", c.d_model, c.gdn_n_v, Fold::kNone);
  w.out = b.matrix(p + "ssm_out.weight", c.gdn_inner, c.d_model, Fold::kForward);

  // Tiled → grouped copies (§4.5). Conv: [channels][kernel]; its V channels are heads of
  // v_head_dim channels, each channel a row of `kernel` taps.
  const std::vector<float> conv = b.floats(p + "ssm_conv1d.weight", {c.conv_kernel, channels});
  w.conv = conv;
  untile_heads(w.conv.data() + qk_channels * c.conv_kernel, conv.data() + qk_channels * c.conv_kernel, n_k,
               rep, c.gdn_v_head_dim * c.conv_kernel);
  const std::vector<float> a = b.floats(p + "ssm_a", {c.gdn_n_v});
  const std::vector<float> dt_bias = b.floats(p + "ssm_dt.bias", {c.gdn_n_v});
  w.a.resize(a.size());
  w.dt_bias.resize(dt_bias.size());
  untile_heads(w.a.data(), a.data(), n_k, rep, 1);
  untile_heads(w.dt_bias.data(), dt_bias.data(), n_k, rep, 1);
  w.norm = b.floats(p + "ssm_norm.weight", {c.gdn_v_head_dim});
  return w;
}

}  // namespace

Weights bind_weights(const gguf::Reader& file, const Config& config, const hadamard::Contract* contract) {
  check_geometry(file, config);
  Binder b(file, contract);
  Weights w;
  w.token_embd = b.matrix("token_embd.weight", config.d_model, config.vocab_size,
                          contract != nullptr ? Fold::kInverse : Fold::kNone);
  // A dense file may tie the head to the embedding; a folded v1 file may not (§4.6 rule 12).
  if (contract == nullptr && !b.has("output.weight")) {
    w.output = w.token_embd;
  } else {
    w.output = b.matrix("output.weight", config.d_model, config.vocab_size, Fold::kForward);
  }
  w.output_norm = b.floats("output_norm.weight", {config.d_model});
  w.ssm_out_grouped = contract != nullptr && contract->gdn_v_grouped;

  int64_t attention_slots = 0;
  int64_t gdn_slots = 0;
  w.layers.resize(static_cast<size_t>(config.n_layer));
  for (int64_t l = 0; l < config.n_layer; ++l) {
    LayerWeights& layer = w.layers[static_cast<size_t>(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    layer.kind = config.layers[static_cast<size_t>(l)];
    layer.attn_norm = b.floats(p + "attn_norm.weight", {config.d_model});
    layer.post_attention_norm = b.floats(p + "post_attention_norm.weight", {config.d_model});
    if (layer.kind == LayerKind::kFullAttention) {
      layer.slot = attention_slots++;
      layer.attention = bind_attention(b, p, config);
    } else {
      layer.slot = gdn_slots++;
      layer.gdn = bind_gdn(b, p, config);
    }
    layer.ffn_gate = b.matrix(p + "ffn_gate.weight", config.d_model, config.d_ff, Fold::kForward);
    layer.ffn_up = b.matrix(p + "ffn_up.weight", config.d_model, config.d_ff, Fold::kForward);
    layer.ffn_down = b.matrix(p + "ffn_down.weight", config.d_ff, config.d_model, Fold::kForward);
  }
  b.check_all_bound(config.n_layer);
  return w;
}

}  // namespace tern::model
