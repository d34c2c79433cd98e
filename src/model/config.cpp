#include "model/config.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>

#include "core/error.h"

namespace tern::model {
namespace {

// Larger than any real hyperparameter (vocab 248320, context 262144 in the 27B) and small enough that
// the shape products below cannot overflow int64.
constexpr int64_t kMaxDimension = int64_t{1} << 26;

// An array element of any GGUF integer type that fits int64; nullopt otherwise.
std::optional<int64_t> integer_of(const gguf::Value& v) {
  if (!gguf::is_integer_type(v.type)) return std::nullopt;
  if (const auto* s = std::get_if<int64_t>(&v.data)) return *s;
  const auto* u = std::get_if<uint64_t>(&v.data);
  if (u == nullptr || *u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(*u);
}

class ConfigReader {
 public:
  explicit ConfigReader(const gguf::Reader& file) : file_(file) {}

  Config read() {
    Config c;
    c.architecture = file_.get_string("general.architecture");
    if (c.architecture != "qwen35") {
      fail(ErrorKind::kConfig, "{}: general.architecture: unknown architecture '{}' (tern supports qwen35)",
           file_.name(), c.architecture);
    }
    read_dimensions(c);
    read_layer_kinds(c);
    check_tensor_shapes(c);
    return c;
  }

 private:
  template <class... Args>
  [[noreturn]] void refuse(std::string_view key, fmt::format_string<Args...> format, Args&&... args) const {
    fail(ErrorKind::kConfig, "{}: {}: {}", file_.name(), key,
         fmt::format(format, std::forward<Args>(args)...));
  }

  static std::string key(std::string_view suffix) { return fmt::format("qwen35.{}", suffix); }

  // A positive integer key (any GGUF integer width, model-spec §11.8).
  int64_t positive(std::string_view suffix) const {
    const std::string name = key(suffix);
    return check_positive(name, file_.get_int(name));
  }

  int64_t check_positive(std::string_view name, int64_t value) const {
    if (value <= 0 || value > kMaxDimension) refuse(name, "{} is out of range (1..{})", value, kMaxDimension);
    return value;
  }

  void read_dimensions(Config& c) const {
    c.context_length = positive("context_length");
    c.d_model = positive("embedding_length");
    c.d_ff = positive("feed_forward_length");
    c.n_head = positive("attention.head_count");
    c.n_head_kv = positive("attention.head_count_kv");
    c.head_dim = positive("attention.key_length");
    const std::string value_length = key("attention.value_length");
    c.value_dim =
        file_.has(value_length) ? check_positive(value_length, file_.get_int(value_length)) : c.head_dim;
    c.rms_eps = file_.get_float(key("attention.layer_norm_rms_epsilon"));
    if (!(c.rms_eps > 0.0 && c.rms_eps < 1.0)) {
      refuse(key("attention.layer_norm_rms_epsilon"), "{} is not in (0, 1)", c.rms_eps);
    }
    c.rope_theta = file_.get_float(key("rope.freq_base"));
    if (!(c.rope_theta > 0.0 && std::isfinite(c.rope_theta))) {
      refuse(key("rope.freq_base"), "{} is not a positive finite number", c.rope_theta);
    }
    c.rope_dim = positive("rope.dimension_count");
    if (c.rope_dim % 2 != 0 || c.rope_dim > c.head_dim) {
      refuse(key("rope.dimension_count"), "{} must be even and at most the head dim {}", c.rope_dim,
             c.head_dim);
    }
    read_rope_sections(c);
    c.conv_kernel = positive("ssm.conv_kernel");
    c.gdn_k_head_dim = positive("ssm.state_size");
    c.gdn_inner = positive("ssm.inner_size");
    c.gdn_n_v = positive("ssm.time_step_rank");
    c.gdn_n_k = positive("ssm.group_count");
    if (c.n_head % c.n_head_kv != 0) {
      refuse(key("attention.head_count_kv"), "{} does not divide head_count {}", c.n_head_kv, c.n_head);
    }
    if (c.gdn_n_v % c.gdn_n_k != 0) {
      refuse(key("ssm.group_count"), "{} does not divide ssm.time_step_rank {}", c.gdn_n_k, c.gdn_n_v);
    }
    if (c.gdn_inner % c.gdn_n_v != 0) {
      refuse(key("ssm.inner_size"), "{} is not a multiple of ssm.time_step_rank {}", c.gdn_inner, c.gdn_n_v);
    }
    c.gdn_v_head_dim = c.gdn_inner / c.gdn_n_v;  // model-spec §11.9: not ssm.state_size
  }

  void read_rope_sections(Config& c) const {
    const std::string name = key("rope.dimension_sections");
    if (!file_.has(name)) return;
    const gguf::Array& sections = file_.get_array(name);
    for (size_t i = 0; i < sections.items.size(); ++i) {
      const gguf::Value& v = sections.items[i];
      const std::optional<int64_t> section = integer_of(v);
      if (!section || *section < 0 || *section > c.rope_dim) {
        refuse(name, "element {} is not an integer in 0..{}", i, c.rope_dim);
      }
      c.rope_sections.push_back(*section);
    }
  }

  void read_layer_kinds(Config& c) const {
    const int64_t block_count = positive("block_count");
    const std::string nextn_key = key("nextn_predict_layers");
    const int64_t nextn = file_.has(nextn_key) ? file_.get_int(nextn_key) : 0;
    if (nextn < 0 || nextn >= block_count) {
      refuse(nextn_key, "{} must be in 0..{} (block_count - 1)", nextn, block_count - 1);
    }
    c.n_layer = block_count - nextn;
    const std::string interval_key = key("full_attention_interval");
    if (file_.has(interval_key))
      c.full_attention_interval = check_positive(interval_key, file_.get_int(interval_key));

    const std::string override_key = key("attention.recurrent_layers");
    if (file_.has(override_key)) {
      // model-spec §11.4: block_count entries, nonzero = GDN; BOOL or any integer type.
      const gguf::Array& recurrent = file_.get_array(override_key);
      if (static_cast<int64_t>(recurrent.items.size()) != block_count) {
        refuse(override_key, "has {} entries, expected block_count = {}", recurrent.items.size(),
               block_count);
      }
      for (int64_t l = 0; l < c.n_layer; ++l) {
        const gguf::Value& v = recurrent.items[static_cast<size_t>(l)];
        bool is_recurrent = false;
        if (const auto* b = std::get_if<bool>(&v.data); b != nullptr && v.type == gguf::ValueType::kBool) {
          is_recurrent = *b;
        } else if (const std::optional<int64_t> flag = integer_of(v)) {
          is_recurrent = *flag != 0;
        } else {
          refuse(override_key, "element {} is {}, expected BOOL or an integer", l,
                 gguf::value_type_name(v.type));
        }
        c.layers.push_back(is_recurrent ? LayerKind::kGatedDeltaNet : LayerKind::kFullAttention);
      }
      return;
    }
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const bool attention = (l + 1) % c.full_attention_interval == 0;
      c.layers.push_back(attention ? LayerKind::kFullAttention : LayerKind::kGatedDeltaNet);
    }
  }

  void expect_shape(const std::string& name, std::initializer_list<int64_t> expected) const {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (t == nullptr) {
      fail(ErrorKind::kConfig, "{}: tensor {} is missing (expected shape [{}])", file_.name(), name,
           fmt::join(expected, ", "));
    }
    const std::span<const int64_t> found(t->ne.data(), t->n_dims);
    if (!std::ranges::equal(found, expected)) {
      fail(ErrorKind::kConfig, "{}: tensor {} has shape [{}], expected [{}] from the qwen35.* keys",
           file_.name(), name, fmt::join(found, ", "), fmt::join(expected, ", "));
    }
  }

  // model-spec §2.7: every tensor the forward reads, with the ne its hyperparameters imply.
  void check_tensor_shapes(Config& c) const {
    const gguf::TensorInfo* embedding = file_.find_tensor("token_embd.weight");
    if (embedding == nullptr)
      fail(ErrorKind::kConfig, "{}: tensor token_embd.weight is missing", file_.name());
    c.vocab_size = embedding->n_dims == 2 ? embedding->ne[1] : 0;
    if (c.vocab_size <= 0) {
      fail(ErrorKind::kConfig, "{}: tensor token_embd.weight must be 2-D [{}, vocab] with at least one row",
           file_.name(), c.d_model);
    }
    const int64_t d = c.d_model;
    expect_shape("token_embd.weight", {d, c.vocab_size});
    expect_shape("output.weight", {d, c.vocab_size});
    expect_shape("output_norm.weight", {d});
    for (int64_t l = 0; l < c.n_layer; ++l) {
      auto name = [l](std::string_view kind) { return fmt::format("blk.{}.{}", l, kind); };
      expect_shape(name("attn_norm.weight"), {d});
      expect_shape(name("post_attention_norm.weight"), {d});
      expect_shape(name("ffn_gate.weight"), {d, c.d_ff});
      expect_shape(name("ffn_up.weight"), {d, c.d_ff});
      expect_shape(name("ffn_down.weight"), {c.d_ff, d});
      if (c.layers[static_cast<size_t>(l)] == LayerKind::kFullAttention) {
        expect_shape(name("attn_q.weight"), {d, c.n_head * c.head_dim * 2});  // query and gate per head
        expect_shape(name("attn_k.weight"), {d, c.n_head_kv * c.head_dim});
        expect_shape(name("attn_v.weight"), {d, c.n_head_kv * c.value_dim});
        expect_shape(name("attn_output.weight"), {c.n_head * c.value_dim, d});
        expect_shape(name("attn_q_norm.weight"), {c.head_dim});
        expect_shape(name("attn_k_norm.weight"), {c.head_dim});
      } else {
        expect_shape(name("attn_qkv.weight"), {d, c.gdn_conv_channels()});
        expect_shape(name("attn_gate.weight"), {d, c.gdn_inner});
        expect_shape(name("ssm_alpha.weight"), {d, c.gdn_n_v});
        expect_shape(name("ssm_beta.weight"), {d, c.gdn_n_v});
        expect_shape(name("ssm_conv1d.weight"), {c.conv_kernel, c.gdn_conv_channels()});
        expect_shape(name("ssm_a"), {c.gdn_n_v});
        expect_shape(name("ssm_dt.bias"), {c.gdn_n_v});
        expect_shape(name("ssm_norm.weight"), {c.gdn_v_head_dim});
        expect_shape(name("ssm_out.weight"), {c.gdn_inner, d});
      }
    }
  }

  const gguf::Reader& file_;
};

}  // namespace

int64_t Config::n_attention_layers() const {
  return std::ranges::count(layers, LayerKind::kFullAttention);
}

Config read_config(const gguf::Reader& file) {
  return ConfigReader(file).read();
}

}  // namespace tern::model
