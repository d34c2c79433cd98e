// Everything one sequence owns between steps (model-spec §6): the KV cache of each full-attention
// layer (capacity fixed at creation, fp16 by default), and the conv and recurrent state of each GDN
// layer (fp32), plus its position. A plain value: copying it makes a checkpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/ref/attention.h"
#include "model/config.h"

namespace tern::runtime {

enum class KvPrecision { kF16, kF32 };

class SequenceState {
 public:
  // Throws Error(kInput) for capacity < 1 and Error(kCapacity) if the cache size overflows.
  SequenceState(const model::Config& config, int64_t capacity, KvPrecision kv = KvPrecision::kF16);

  int64_t position() const { return position_; }  // tokens consumed so far
  int64_t capacity() const { return capacity_; }  // most tokens the KV cache holds
  KvPrecision kv_precision() const { return kv_; }
  size_t bytes() const;  // memory held by the caches

  // Back to the start of a sequence: zero state, position 0.
  void reset();

  // True if this state was created for a model of this geometry.
  bool fits(const model::Config& config) const;

  // KV of attention slot `slot`: row `pos` ← k, v ([n_kv][head_dim] each), rounded to the storage type.
  void store_kv(int64_t slot, int64_t pos, const float* k, const float* v);
  kernels::ref::KvView kv_view(int64_t slot) const;

  // GDN slot `slot`: conv state [conv_kernel−1][conv_channels] (raw inputs, oldest first) and
  // recurrent state [n_v][dk][dv] (S[i][j], i over k dims), both fp32.
  std::span<float> conv_state(int64_t slot);
  std::span<float> recurrent_state(int64_t slot);
  std::span<const float> conv_state(int64_t slot) const;
  std::span<const float> recurrent_state(int64_t slot) const;

  // Called by the forward once every layer has consumed `n` more tokens.
  void advance(int64_t n) { position_ += n; }

 private:
  int64_t capacity_ = 0;
  KvPrecision kv_ = KvPrecision::kF16;
  int64_t kv_heads_ = 0;
  int64_t head_dim_ = 0;
  int64_t kv_row_ = 0;     // kv_heads_ · head_dim_
  int64_t kv_layers_ = 0;  // attention layers
  int64_t conv_size_ = 0;  // per GDN layer
  int64_t recurrent_size_ = 0;
  int64_t position_ = 0;
  std::vector<uint16_t> k16_, v16_;  // [attention layers][capacity][kv_row], fp16 bits
  std::vector<float> k32_, v32_;     // same, fp32
  std::vector<float> conv_;          // [gdn layers][conv_size_]
  std::vector<float> recurrent_;     // [gdn layers][recurrent_size_]
};

}  // namespace tern::runtime
