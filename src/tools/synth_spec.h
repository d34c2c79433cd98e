// The dimensions of a synthetic qwen35 model (model-spec §1, §2.4) and the presets `tern synth` knows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quant/types.h"

namespace tern::tools {

struct SynthSpec {
  std::string preset;  // recorded in general.basename
  int64_t n_layer = 0;
  int64_t d_model = 0;
  int64_t d_ff = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  int64_t rope_dim = 0;
  int64_t gdn_n_k = 0;    // q/k heads (ssm.group_count)
  int64_t gdn_n_v = 0;    // v heads (ssm.time_step_rank)
  int64_t gdn_k_dim = 0;  // q/k head dim (ssm.state_size)
  int64_t gdn_v_dim = 0;  // v head dim (ssm.inner_size / time_step_rank, model-spec §11.9)
  int64_t conv_kernel = 0;
  int64_t vocab = 0;  // rows of token_embd.weight / output.weight
  int64_t context_length = 0;
  int64_t full_attention_interval = 4;
  int64_t block_size = 0;  // prism.hadamard.block_size
  quant::TensorType ternary_type = quant::TensorType::kPQ2_0;
  uint64_t seed = 0;
  float rms_eps = 1e-6f;
  float rope_theta = 1e7f;

  bool is_attention_layer(int64_t layer) const { return (layer + 1) % full_attention_interval == 0; }
  int64_t attention_width() const { return n_head * head_dim; }  // q rows / 2, attn_output K
  int64_t gdn_inner() const { return gdn_n_v * gdn_v_dim; }
  int64_t gdn_qk_width() const { return gdn_n_k * gdn_k_dim; }
  int64_t gdn_conv_channels() const { return 2 * gdn_qk_width() + gdn_inner(); }
  // M-RoPE sections in frequency pairs, the converter's formula (model-spec §11.9).
  std::vector<int32_t> rope_sections() const;
};

// "tiny" (every layer kind, a few MB, the geometry of model-spec §11.1) or "27b" (the exact
// Ternary-Bonsai-2-27B inventory). Throws Error(kInput) for another name.
SynthSpec synth_preset(std::string_view name);

// Throws Error(kInput) naming the first dimension that cannot make a valid file.
void validate_spec(const SynthSpec& spec);

}  // namespace tern::tools
