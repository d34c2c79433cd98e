#include "tools/synth_spec.h"

#include <cmath>

#include "core/error.h"

namespace tern::tools {

std::vector<int32_t> SynthSpec::rope_sections() const {
  const auto pairs = static_cast<int32_t>(rope_dim / 2);
  return {(pairs + 2) / 3, (pairs + 1) / 3, pairs / 3, 0};
}

SynthSpec synth_preset(std::string_view name) {
  SynthSpec spec;
  spec.preset = std::string(name);
  if (name == "tiny") {
    // model-spec §11.1: three distinct folded widths (256, 384, 640), each several 64-blocks;
    // 2 k-heads with 3 v-heads each; k head dim 32 != v head dim 64 (§11.9); layers 3 and 7 are
    // full attention, the other six Gated DeltaNet.
    spec.n_layer = 8;
    spec.d_model = 256;
    spec.d_ff = 640;
    spec.n_head = 6;
    spec.n_head_kv = 2;
    spec.head_dim = 64;
    spec.rope_dim = 16;
    spec.gdn_n_k = 2;
    spec.gdn_n_v = 6;
    spec.gdn_k_dim = 32;
    spec.gdn_v_dim = 64;
    spec.conv_kernel = 4;
    spec.vocab = 1024;
    spec.context_length = 4096;
    spec.full_attention_interval = 4;
    spec.block_size = 64;
  } else if (name == "27b") {
    spec.n_layer = 64;  // model-spec §1
    spec.d_model = 5120;
    spec.d_ff = 17408;
    spec.n_head = 24;
    spec.n_head_kv = 4;
    spec.head_dim = 256;
    spec.rope_dim = 64;
    spec.gdn_n_k = 16;
    spec.gdn_n_v = 48;
    spec.gdn_k_dim = 128;
    spec.gdn_v_dim = 128;
    spec.conv_kernel = 4;
    spec.vocab = 248320;
    spec.context_length = 262144;
    spec.full_attention_interval = 4;
    spec.block_size = 1024;
  } else {
    fail(ErrorKind::kInput, "unknown synth preset '{}' (known: tiny, 27b)", name);
  }
  return spec;
}

namespace {

constexpr int64_t kMaxDimension = int64_t{1} << 24;

void require_positive(std::string_view what, int64_t value) {
  if (value <= 0 || value > kMaxDimension) {
    fail(ErrorKind::kInput, "synth: {} = {} is out of range (1..{})", what, value, kMaxDimension);
  }
}

void require_foldable(std::string_view what, int64_t width, int64_t block_size) {
  if (width % 128 != 0 || width % block_size != 0) {
    fail(ErrorKind::kInput,
         "synth: {} = {} must be a multiple of the ternary group 128 and of the Hadamard block {}", what,
         width, block_size);
  }
}

}  // namespace

void validate_spec(const SynthSpec& spec) {
  require_positive("layers", spec.n_layer);
  require_positive("d_model", spec.d_model);
  require_positive("d_ff", spec.d_ff);
  require_positive("heads", spec.n_head);
  require_positive("kv_heads", spec.n_head_kv);
  require_positive("head_dim", spec.head_dim);
  require_positive("rope_dim", spec.rope_dim);
  require_positive("gdn_k_heads", spec.gdn_n_k);
  require_positive("gdn_v_heads", spec.gdn_n_v);
  require_positive("gdn_k_dim", spec.gdn_k_dim);
  require_positive("gdn_v_dim", spec.gdn_v_dim);
  require_positive("conv_kernel", spec.conv_kernel);
  require_positive("vocab", spec.vocab);
  require_positive("context", spec.context_length);
  require_positive("attention_interval", spec.full_attention_interval);
  require_positive("block_size", spec.block_size);
  if ((spec.block_size & (spec.block_size - 1)) != 0) {
    fail(ErrorKind::kInput, "synth: block_size = {} is not a power of two", spec.block_size);
  }
  require_foldable("d_model", spec.d_model, spec.block_size);
  require_foldable("d_ff", spec.d_ff, spec.block_size);
  require_foldable("heads*head_dim", spec.attention_width(), spec.block_size);
  require_foldable("gdn_v_heads*gdn_v_dim", spec.gdn_inner(), spec.block_size);
  if (spec.n_head % spec.n_head_kv != 0) {
    fail(ErrorKind::kInput, "synth: heads = {} is not a multiple of kv_heads = {}", spec.n_head,
         spec.n_head_kv);
  }
  if (spec.gdn_n_v % spec.gdn_n_k != 0) {
    fail(ErrorKind::kInput, "synth: gdn_v_heads = {} is not a multiple of gdn_k_heads = {}", spec.gdn_n_v,
         spec.gdn_n_k);
  }
  if (spec.rope_dim % 2 != 0 || spec.rope_dim > spec.head_dim) {
    fail(ErrorKind::kInput, "synth: rope_dim = {} must be even and at most head_dim = {}", spec.rope_dim,
         spec.head_dim);
  }
  if (!quant::is_ternary(spec.ternary_type) || spec.ternary_type == quant::TensorType::kQ2_0) {
    fail(ErrorKind::kInput, "synth: the ternary type must be pq2_0 or ptq1_0, not {}",
         quant::traits(spec.ternary_type).name);
  }
  // What the loader takes (model/config.cpp): a file synth writes must load.
  if (!(spec.rms_eps > 0.0f && spec.rms_eps < 1.0f) ||
      !(spec.rope_theta > 0.0f && std::isfinite(spec.rope_theta))) {
    fail(ErrorKind::kInput, "synth: rms_eps = {} must be in (0, 1) and rope_theta = {} positive and finite",
         spec.rms_eps, spec.rope_theta);
  }
}

}  // namespace tern::tools
