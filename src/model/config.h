// The qwen35 hyperparameters (model-spec §2.4), read from GGUF and checked against tensor shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/reader.h"

namespace tern::model {

enum class LayerKind { kGatedDeltaNet, kFullAttention };

struct Config {
  std::string architecture;  // "qwen35"
  int64_t n_layer = 0;       // decoder layers (block_count - nextn_predict_layers)
  int64_t d_model = 0;       // embedding_length
  int64_t d_ff = 0;          // feed_forward_length
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;   // attention.key_length
  int64_t value_dim = 0;  // attention.value_length (defaults to head_dim)
  double rms_eps = 1e-6;
  double rope_theta = 1e7;
  int64_t rope_dim = 0;  // rope.dimension_count
  std::vector<int64_t> rope_sections;
  int64_t context_length = 0;
  int64_t conv_kernel = 0;     // ssm.conv_kernel
  int64_t gdn_k_head_dim = 0;  // ssm.state_size
  int64_t gdn_inner = 0;       // ssm.inner_size (n_v * v_head_dim)
  int64_t gdn_n_v = 0;         // ssm.time_step_rank
  int64_t gdn_n_k = 0;         // ssm.group_count
  int64_t gdn_v_head_dim = 0;  // gdn_inner / gdn_n_v (model-spec §11.9)
  int64_t full_attention_interval = 4;
  int64_t vocab_size = 0;  // rows of token_embd.weight
  std::vector<LayerKind> layers;

  int64_t gdn_conv_channels() const { return 2 * gdn_n_k * gdn_k_head_dim + gdn_inner; }
  int64_t n_attention_layers() const;
};

// Throws Error(kConfig) naming the file and key (or tensor and shape) on anything missing,
// inconsistent with the tensors, or an architecture other than qwen35.
Config read_config(const gguf::Reader& file);

}  // namespace tern::model
