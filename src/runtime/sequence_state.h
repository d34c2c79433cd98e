// Everything one sequence owns between steps (model-spec §6): the KV cache of each full-attention
// layer (capacity fixed at creation; fp16 by default, fp32 or 8-bit kQ8, see kernels/ref/attention.h),
// and the conv and recurrent state of each GDN
// layer (fp32), plus its position. A plain value: copying it makes a checkpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/huge_pages.h"
#include "kernels/ref/attention.h"
#include "model/config.h"

namespace tern::runtime {

using KvPrecision = kernels::ref::KvPrecision;

// "f16", "f32" or "q8"; throws Error(kInput) for any other name.
KvPrecision parse_kv_precision(std::string_view name);
const char* kv_precision_name(KvPrecision precision);
// Bytes one head of head_dim keys (or values) takes at one position, scales included.
size_t kv_head_bytes(KvPrecision precision, int64_t head_dim);

// Bytes SequenceState(config, capacity, kv).bytes() will be; throws as that constructor does for a
// capacity < 1 or a cache that overflows.
uint64_t sequence_state_bytes(const model::Config& config, int64_t capacity, KvPrecision kv);

// "1 sequence of 4096 tokens (f16 KV)", "2 sequences of ...": how memory errors and warnings name states.
std::string describe_states(int64_t sequences, int64_t capacity, KvPrecision kv);

// Throws Error(kCapacity) when `bytes` of sequence state would not fit in the memory available now
// (core/available_memory.h): the states are zero-filled when made, so past that the OOM killer would end
// the process. `what` names the states (describe_states).
void check_state_memory(uint64_t bytes, std::string_view what);

// Where a model's matrices are read from its file mapping (model::Model::mapped_matrix_bytes), their pages
// are page cache, which the memory available counts as free: states that fit only by evicting those pages
// make every token read them from the file again. Returns a one-line warning naming what is needed and
// what is available, or nothing where the states and the mapped matrices fit together, where the states
// alone do not (check_state_memory refuses them) or where the memory available is unknown. `what` names
// the states, as for check_state_memory.
std::optional<std::string> mapped_weights_warning(uint64_t state_bytes, uint64_t mapped_bytes,
                                                  std::string_view what);

// a + b, or UINT64_MAX where that overflows.
inline uint64_t saturating_sum(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// bytes · count, or UINT64_MAX where that overflows (count ≥ 0).
inline uint64_t saturating_product(uint64_t bytes, int64_t count) {
  const auto n = static_cast<uint64_t>(count);
  return n != 0 && bytes > UINT64_MAX / n ? UINT64_MAX : bytes * n;
}

class SequenceState {
 public:
  // Throws Error(kInput) for capacity < 1, Error(kCapacity) if the cache size overflows or would not fit
  // in the memory available (check_state_memory).
  SequenceState(const model::Config& config, int64_t capacity, KvPrecision kv = KvPrecision::kF16);

  int64_t position() const { return position_; }  // tokens consumed so far
  int64_t capacity() const { return capacity_; }  // most tokens the KV cache holds
  KvPrecision kv_precision() const { return kv_; }
  size_t bytes() const;  // memory held by the caches

  // Back to the start of a sequence: zero state, position 0.
  void reset();

  // True if this state was created for a model of this geometry.
  bool fits(const model::Config& config) const;

  // KV of attention slot `slot`: position `pos` ← k, v ([n_kv][head_dim] each), rounded to the storage
  // type, each head at its row of the block layout (kernels::ref::kv_row).
  void store_kv(int64_t slot, int64_t pos, const float* k, const float* v);
  kernels::ref::KvView kv_view(int64_t slot) const;

  // The stored KV of positions [0, n) of every attention slot as raw bytes (kv_bytes(n) of them), and
  // back: a copy made this way restores bit for bit whatever the precision. Whole blocks of the layout
  // are copied, so positions past n in the last block ride along (never read before they are stored).
  // load_kv throws Error(kInput) if the size does not match or n exceeds the capacity; it does not move
  // the position.
  size_t kv_bytes(int64_t n) const;
  std::vector<uint8_t> save_kv(int64_t n) const;
  void load_kv(std::span<const uint8_t> bytes, int64_t n);

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
  int64_t kv_row_ = 0;          // kv_heads_ · head_dim_: elements of one position
  int64_t slot_positions_ = 0;  // capacity_ rounded up to whole KV blocks: positions a slot's arrays span
  int64_t kv_layers_ = 0;       // attention layers
  int64_t conv_size_ = 0;       // per GDN layer
  int64_t recurrent_size_ = 0;
  int64_t position_ = 0;
  // On huge pages where large (core/huge_pages.h): decode streams them every token.
  StreamedVector<uint16_t> k16_,
      v16_;                          // fp16 bits, [attention layers][slot_positions_ · kv_heads_][head_dim]
  StreamedVector<float> k32_, v32_;  // same, fp32
  StreamedVector<int8_t> k8_, v8_;   // same, kQ8 codes
  StreamedVector<float> k_scales_, v_scales_;  // kQ8: [attention layers][rows as k8_][groups]
  StreamedVector<float> conv_;                 // [gdn layers][conv_size_]
  StreamedVector<float> recurrent_;            // [gdn layers][recurrent_size_]

  // f(bytes, position_bytes) for each KV array this precision uses, each [attention layers][slot_positions_
  // · position_bytes] (a slot's positions in ref::kv_row's blocks); Self is SequenceState or const.
  template <class Self, class F>
  static void for_each_kv_array(Self& self, F f);
};

}  // namespace tern::runtime
