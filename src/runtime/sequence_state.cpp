#include "runtime/sequence_state.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/available_memory.h"
#include "core/error.h"
#include "core/half.h"

namespace tern::runtime {

KvPrecision parse_kv_precision(std::string_view name) {
  if (name == "f16") return KvPrecision::kF16;
  if (name == "f32") return KvPrecision::kF32;
  if (name == "q8") return KvPrecision::kQ8;
  fail(ErrorKind::kInput, "KV cache type must be f16, f32 or q8, not '{}'", name);
}

const char* kv_precision_name(KvPrecision precision) {
  switch (precision) {
    case KvPrecision::kF16:
      return "f16";
    case KvPrecision::kF32:
      return "f32";
    case KvPrecision::kQ8:
      return "q8";
  }
  return "?";
}

size_t kv_head_bytes(KvPrecision precision, int64_t head_dim) {
  const int64_t scales = precision == KvPrecision::kQ8 ? kernels::ref::q8_groups(head_dim) : 0;
  return static_cast<size_t>(head_dim * kernels::ref::kv_element_bytes(precision)) +
         sizeof(float) * static_cast<size_t>(scales);
}

namespace {

// The element counts of one sequence's arrays.
struct StateSizes {
  size_t kv_elements = 0;  // each of K and V: [attention layers][block positions · KV heads][head_dim]
  size_t kv_scales = 0;    // each of K and V, kQ8 only: [attention layers][rows as kv_elements][groups]
  size_t conv = 0;         // [GDN layers][conv state]
  size_t recurrent = 0;    // [GDN layers][recurrent state]

  uint64_t bytes(KvPrecision kv) const {
    const uint64_t element_bytes = static_cast<uint64_t>(kernels::ref::kv_element_bytes(kv));
    return 2 * (kv_elements * element_bytes + kv_scales * sizeof(float)) + (conv + recurrent) * sizeof(float);
  }
};

StateSizes state_sizes(const model::Config& config, int64_t capacity, KvPrecision kv) {
  if (capacity < 1) fail(ErrorKind::kInput, "sequence capacity must be at least 1 token, got {}", capacity);
  const int64_t slot_positions = kernels::ref::kv_block_positions(capacity);
  const int64_t kv_row = config.n_head_kv * config.head_dim;
  const int64_t kv_layers = config.n_attention_layers();
  const int64_t element_bytes = kv == KvPrecision::kF32 ? 4 : 2;  // q8: 1 + 4/32 ≤ 2
  if (kv_layers > 0 &&
      slot_positions > std::numeric_limits<int64_t>::max() / 4 / element_bytes / kv_row / kv_layers) {
    fail(ErrorKind::kCapacity, "KV cache for {} tokens overflows the address space", capacity);
  }
  const int64_t gdn_layers = config.n_layer - kv_layers;
  StateSizes sizes;
  sizes.kv_elements = static_cast<size_t>(kv_layers * slot_positions * kv_row);
  if (kv == KvPrecision::kQ8) {
    sizes.kv_scales = static_cast<size_t>(kv_layers * slot_positions * config.n_head_kv *
                                          kernels::ref::q8_groups(config.head_dim));
  }
  sizes.conv = static_cast<size_t>(gdn_layers * (config.conv_kernel - 1) * config.gdn_conv_channels());
  sizes.recurrent =
      static_cast<size_t>(gdn_layers * config.gdn_n_v * config.gdn_k_head_dim * config.gdn_v_head_dim);
  return sizes;
}

}  // namespace

uint64_t sequence_state_bytes(const model::Config& config, int64_t capacity, KvPrecision kv) {
  return state_sizes(config, capacity, kv).bytes(kv);
}

std::string describe_states(int64_t sequences, int64_t capacity, KvPrecision kv) {
  return fmt::format("{} sequence{} of {} tokens ({} KV)", sequences, sequences == 1 ? "" : "s", capacity,
                     kv_precision_name(kv));
}

void check_state_memory(uint64_t bytes, std::string_view what) {
  require_memory(bytes, what, " of KV cache and recurrent state");
}

std::optional<std::string> mapped_weights_warning(uint64_t state_bytes, uint64_t mapped_bytes,
                                                  std::string_view what) {
  const std::optional<uint64_t> available = available_memory_bytes();
  if (!available || saturating_sum(state_bytes, mapped_bytes) <= *available || state_bytes > *available)
    return std::nullopt;
  return fmt::format(
      "{}: {:.1f} GiB of KV cache and recurrent state and {:.1f} GiB of mapped weights (--mmap) exceed the "
      "{:.1f} GiB of memory available; tokens will read evicted weights from the file again",
      what, static_cast<double>(state_bytes) / kGiB, static_cast<double>(mapped_bytes) / kGiB,
      static_cast<double>(*available) / kGiB);
}

SequenceState::SequenceState(const model::Config& config, int64_t capacity, KvPrecision kv)
    : capacity_(capacity), kv_(kv) {
  const StateSizes sizes = state_sizes(config, capacity, kv);
  check_state_memory(sizes.bytes(kv), describe_states(1, capacity, kv));
  kv_heads_ = config.n_head_kv;
  head_dim_ = config.head_dim;
  kv_row_ = kv_heads_ * head_dim_;
  slot_positions_ = kernels::ref::kv_block_positions(capacity);
  kv_layers_ = config.n_attention_layers();
  conv_size_ = (config.conv_kernel - 1) * config.gdn_conv_channels();
  recurrent_size_ = config.gdn_n_v * config.gdn_k_head_dim * config.gdn_v_head_dim;
  switch (kv) {
    case KvPrecision::kF16:
      k16_.assign(sizes.kv_elements, 0);
      v16_.assign(sizes.kv_elements, 0);
      break;
    case KvPrecision::kF32:
      k32_.assign(sizes.kv_elements, 0.0f);
      v32_.assign(sizes.kv_elements, 0.0f);
      break;
    case KvPrecision::kQ8:
      k8_.assign(sizes.kv_elements, 0);
      v8_.assign(sizes.kv_elements, 0);
      k_scales_.assign(sizes.kv_scales, 0.0f);
      v_scales_.assign(sizes.kv_scales, 0.0f);
      break;
  }
  conv_.assign(sizes.conv, 0.0f);
  recurrent_.assign(sizes.recurrent, 0.0f);
}

size_t SequenceState::bytes() const {
  return (k16_.size() + v16_.size()) * sizeof(uint16_t) + (k8_.size() + v8_.size()) * sizeof(int8_t) +
         (k32_.size() + v32_.size() + k_scales_.size() + v_scales_.size() + conv_.size() +
          recurrent_.size()) *
             sizeof(float);
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
  const size_t slot_rows = static_cast<size_t>(slot * slot_positions_ * kv_heads_);
  const int64_t groups = kernels::ref::q8_groups(head_dim_);
  for (int64_t j = 0; j < kv_heads_; ++j) {
    const size_t row = slot_rows + static_cast<size_t>(kernels::ref::kv_row(pos, j, kv_heads_));
    const size_t at = row * static_cast<size_t>(head_dim_);
    const float* k_head = k + j * head_dim_;
    const float* v_head = v + j * head_dim_;
    switch (kv_) {
      case KvPrecision::kF16:
        for (int64_t d = 0; d < head_dim_; ++d) {
          k16_[at + d] = fp32_to_fp16(k_head[d]);
          v16_[at + d] = fp32_to_fp16(v_head[d]);
        }
        break;
      case KvPrecision::kF32:
        std::copy(k_head, k_head + head_dim_, k32_.begin() + static_cast<ptrdiff_t>(at));
        std::copy(v_head, v_head + head_dim_, v32_.begin() + static_cast<ptrdiff_t>(at));
        break;
      case KvPrecision::kQ8: {
        const size_t scale_at = row * static_cast<size_t>(groups);
        kernels::ref::quantize_q8_head(k_head, head_dim_, &k8_[at], &k_scales_[scale_at]);
        kernels::ref::quantize_q8_head(v_head, head_dim_, &v8_[at], &v_scales_[scale_at]);
        break;
      }
    }
  }
}

kernels::ref::KvView SequenceState::kv_view(int64_t slot) const {
  const size_t base = static_cast<size_t>(slot * slot_positions_ * kv_row_);
  kernels::ref::KvView view;
  view.precision = kv_;
  view.n_kv = kv_heads_;
  view.head_dim = head_dim_;
  switch (kv_) {
    case KvPrecision::kF16:
      view.k = k16_.data() + base;
      view.v = v16_.data() + base;
      break;
    case KvPrecision::kF32:
      view.k = k32_.data() + base;
      view.v = v32_.data() + base;
      break;
    case KvPrecision::kQ8: {
      const size_t scale_base =
          static_cast<size_t>(slot * slot_positions_ * kv_heads_ * kernels::ref::q8_groups(head_dim_));
      view.k = k8_.data() + base;
      view.v = v8_.data() + base;
      view.k_scales = k_scales_.data() + scale_base;
      view.v_scales = v_scales_.data() + scale_base;
      break;
    }
  }
  return view;
}

template <class Self, class F>
void SequenceState::for_each_kv_array(Self& self, F f) {
  auto visit = [&](auto& array) {
    using Element = typename std::remove_reference_t<decltype(array)>::value_type;
    if (array.empty()) return;
    const auto row_elements =
        static_cast<size_t>(array.size()) / static_cast<size_t>(self.kv_layers_ * self.slot_positions_);
    f(array.data(), row_elements * sizeof(Element));
  };
  visit(self.k16_);
  visit(self.v16_);
  visit(self.k32_);
  visit(self.v32_);
  visit(self.k8_);
  visit(self.v8_);
  visit(self.k_scales_);
  visit(self.v_scales_);
}

size_t SequenceState::kv_bytes(int64_t n) const {
  size_t total = 0;
  for_each_kv_array(*this, [&](const void*, size_t position_bytes) {
    total += static_cast<size_t>(kv_layers_ * kernels::ref::kv_block_positions(n)) * position_bytes;
  });
  return total;
}

std::vector<uint8_t> SequenceState::save_kv(int64_t n) const {
  if (n < 0 || n > capacity_) fail(ErrorKind::kInput, "save_kv: {} rows outside capacity {}", n, capacity_);
  std::vector<uint8_t> out(kv_bytes(n));
  uint8_t* at = out.data();
  for_each_kv_array(*this, [&](const void* data, size_t position_bytes) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (int64_t slot = 0; slot < kv_layers_; ++slot) {
      const size_t length = static_cast<size_t>(kernels::ref::kv_block_positions(n)) * position_bytes;
      if (length > 0)
        std::memcpy(at, bytes + static_cast<size_t>(slot * slot_positions_) * position_bytes, length);
      at += length;
    }
  });
  return out;
}

void SequenceState::load_kv(std::span<const uint8_t> in, int64_t n) {
  if (n < 0 || n > capacity_ || in.size() != kv_bytes(n)) {
    fail(ErrorKind::kInput, "load_kv: {} bytes for {} rows do not fit a {} KV cache of capacity {}",
         in.size(), n, kv_precision_name(kv_), capacity_);
  }
  const uint8_t* at = in.data();
  for_each_kv_array(*this, [&](void* data, size_t position_bytes) {
    auto* bytes = static_cast<uint8_t*>(data);
    for (int64_t slot = 0; slot < kv_layers_; ++slot) {
      const size_t length = static_cast<size_t>(kernels::ref::kv_block_positions(n)) * position_bytes;
      if (length > 0)
        std::memcpy(bytes + static_cast<size_t>(slot * slot_positions_) * position_bytes, at, length);
      at += length;
    }
  });
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
