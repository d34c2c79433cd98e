#include "runtime/sequence_state.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/half.h"

namespace tern::runtime {

SequenceState::SequenceState(const model::Config& config, int64_t capacity, KvPrecision kv)
    : capacity_(capacity), kv_(kv) {
  if (capacity < 1) fail(ErrorKind::kInput, "sequence capacity must be at least 1 token, got {}", capacity);
  kv_heads_ = config.n_head_kv;
  head_dim_ = config.head_dim;
  kv_row_ = kv_heads_ * head_dim_;
  kv_layers_ = config.n_attention_layers();
  const int64_t gdn_layers = config.n_layer - kv_layers_;
  conv_size_ = (config.conv_kernel - 1) * config.gdn_conv_channels();
  recurrent_size_ = config.gdn_n_v * config.gdn_k_head_dim * config.gdn_v_head_dim;
  const int64_t element_bytes = kv == KvPrecision::kF16 ? 2 : 4;
  if (kv_layers_ > 0 &&
      capacity > std::numeric_limits<int64_t>::max() / 4 / element_bytes / kv_row_ / kv_layers_) {
    fail(ErrorKind::kCapacity, "KV cache for {} tokens overflows the address space", capacity);
  }
  const size_t kv_elems = static_cast<size_t>(kv_layers_ * capacity * kv_row_);
  if (kv == KvPrecision::kF16) {
    k16_.assign(kv_elems, 0);
    v16_.assign(kv_elems, 0);
  } else {
    k32_.assign(kv_elems, 0.0f);
    v32_.assign(kv_elems, 0.0f);
  }
  conv_.assign(static_cast<size_t>(gdn_layers * conv_size_), 0.0f);
  recurrent_.assign(static_cast<size_t>(gdn_layers * recurrent_size_), 0.0f);
}

size_t SequenceState::bytes() const {
  return (k16_.size() + v16_.size()) * sizeof(uint16_t) +
         (k32_.size() + v32_.size() + conv_.size() + recurrent_.size()) * sizeof(float);
}

void SequenceState::reset() {
  // KV rows at or past the position are never read, so only the GDN state needs zeroing.
  std::fill(conv_.begin(), conv_.end(), 0.0f);
  std::fill(recurrent_.begin(), recurrent_.end(), 0.0f);
  position_ = 0;
}

bool SequenceState::fits(const model::Config& config) const {
  const int64_t gdn_layers = config.n_layer - config.n_attention_layers();
  return kv_heads_ == config.n_head_kv && head_dim_ == config.head_dim &&
         kv_layers_ == config.n_attention_layers() &&
         conv_size_ == (config.conv_kernel - 1) * config.gdn_conv_channels() &&
         recurrent_size_ == config.gdn_n_v * config.gdn_k_head_dim * config.gdn_v_head_dim &&
         conv_.size() == static_cast<size_t>(gdn_layers * conv_size_);
}

void SequenceState::store_kv(int64_t slot, int64_t pos, const float* k, const float* v) {
  const size_t base = static_cast<size_t>((slot * capacity_ + pos) * kv_row_);
  if (kv_ == KvPrecision::kF16) {
    for (int64_t i = 0; i < kv_row_; ++i) {
      k16_[base + i] = fp32_to_fp16(k[i]);
      v16_[base + i] = fp32_to_fp16(v[i]);
    }
  } else {
    std::copy(k, k + kv_row_, k32_.begin() + static_cast<ptrdiff_t>(base));
    std::copy(v, v + kv_row_, v32_.begin() + static_cast<ptrdiff_t>(base));
  }
}

kernels::ref::KvView SequenceState::kv_view(int64_t slot) const {
  const size_t base = static_cast<size_t>(slot * capacity_ * kv_row_);
  kernels::ref::KvView view;
  view.fp16 = kv_ == KvPrecision::kF16;
  view.k = view.fp16 ? static_cast<const void*>(k16_.data() + base) : k32_.data() + base;
  view.v = view.fp16 ? static_cast<const void*>(v16_.data() + base) : v32_.data() + base;
  view.n_kv = kv_heads_;
  view.head_dim = head_dim_;
  return view;
}

std::span<float> SequenceState::conv_state(int64_t slot) {
  return {conv_.data() + slot * conv_size_, static_cast<size_t>(conv_size_)};
}
std::span<float> SequenceState::recurrent_state(int64_t slot) {
  return {recurrent_.data() + slot * recurrent_size_, static_cast<size_t>(recurrent_size_)};
}
std::span<const float> SequenceState::conv_state(int64_t slot) const {
  return {conv_.data() + slot * conv_size_, static_cast<size_t>(conv_size_)};
}
std::span<const float> SequenceState::recurrent_state(int64_t slot) const {
  return {recurrent_.data() + slot * recurrent_size_, static_cast<size_t>(recurrent_size_)};
}

}  // namespace tern::runtime
