#include "runtime/prefix_cache.h"

// Header-only xxhash: nothing to link.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>

#include "core/error.h"

namespace tern::runtime {

namespace {

uint64_t prefix_hash(std::span<const int32_t> tokens) {
  return XXH3_64bits(tokens.data(), tokens.size() * sizeof(int32_t));
}

template <typename T>
size_t vector_bytes(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

int64_t gdn_layers(const model::Config& config) {
  return config.n_layer - config.n_attention_layers();
}

}  // namespace

size_t Checkpoint::bytes() const {
  return vector_bytes(kv) + vector_bytes(conv) + vector_bytes(recurrent) + vector_bytes(last_logits) +
         sizeof(Checkpoint);
}

Checkpoint capture_checkpoint(const SequenceState& state, const model::Config& config) {
  Checkpoint cp;
  cp.position = state.position();
  cp.kv_precision = state.kv_precision();
  cp.kv = state.save_kv(cp.position);
  for (int64_t slot = 0; slot < gdn_layers(config); ++slot) {
    const auto conv = state.conv_state(slot);
    const auto recurrent = state.recurrent_state(slot);
    cp.conv.insert(cp.conv.end(), conv.begin(), conv.end());
    cp.recurrent.insert(cp.recurrent.end(), recurrent.begin(), recurrent.end());
  }
  return cp;
}

void restore_checkpoint(const Checkpoint& cp, const model::Config& config, SequenceState& state) {
  const size_t gdn_elems = static_cast<size_t>(gdn_layers(config));
  if (!state.fits(config) || cp.position > state.capacity() || cp.kv_precision != state.kv_precision() ||
      cp.kv.size() != state.kv_bytes(cp.position) ||
      (gdn_elems > 0 && (cp.conv.size() != gdn_elems * state.conv_state(0).size() ||
                         cp.recurrent.size() != gdn_elems * state.recurrent_state(0).size()))) {
    fail(ErrorKind::kInput, "prefix cache: checkpoint at position {} does not fit a sequence of capacity {}",
         cp.position, state.capacity());
  }
  state.reset();
  state.load_kv(cp.kv, cp.position);
  for (int64_t slot = 0; slot < gdn_layers(config); ++slot) {
    const auto conv = state.conv_state(slot);
    const auto recurrent = state.recurrent_state(slot);
    std::copy_n(cp.conv.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(slot) * conv.size()),
                conv.size(), conv.begin());
    std::copy_n(cp.recurrent.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(slot) * recurrent.size()),
                recurrent.size(), recurrent.begin());
  }
  state.advance(cp.position);
}

std::shared_ptr<const Checkpoint> PrefixCache::lookup(std::span<const int32_t> tokens) {
  const auto length = static_cast<int64_t>(tokens.size());
  // Longest first: the positions that hold entries, from the query length down.
  for (auto it = positions_.upper_bound(length); it != positions_.begin();) {
    --it;
    const int64_t position = it->first;
    const auto prefix = tokens.first(static_cast<size_t>(position));
    const auto found = entries_.find(prefix_hash(prefix));
    if (found == entries_.end()) continue;
    const Entry& entry = found->second;
    if (!std::equal(entry.tokens.begin(), entry.tokens.end(), prefix.begin(), prefix.end())) continue;
    if (position == length && entry.checkpoint->last_logits.empty()) continue;
    lru_.splice(lru_.begin(), lru_, entry.lru);
    return entry.checkpoint;
  }
  return nullptr;
}

bool PrefixCache::contains(std::span<const int32_t> prefix) const {
  const auto found = entries_.find(prefix_hash(prefix));
  return found != entries_.end() &&
         std::equal(found->second.tokens.begin(), found->second.tokens.end(), prefix.begin(), prefix.end());
}

void PrefixCache::insert(std::span<const int32_t> tokens, Checkpoint checkpoint) {
  if (checkpoint.position < 1 || checkpoint.position > static_cast<int64_t>(tokens.size())) {
    fail(ErrorKind::kInput, "prefix cache: checkpoint position {} outside a {}-token prefix",
         checkpoint.position, tokens.size());
  }
  const auto prefix = tokens.first(static_cast<size_t>(checkpoint.position));
  const uint64_t key = prefix_hash(prefix);
  if (const auto found = entries_.find(key); found != entries_.end()) {
    if (checkpoint.last_logits.empty()) checkpoint.last_logits = found->second.checkpoint->last_logits;
    erase(key);
  }
  if (checkpoint.bytes() > budget_bytes_) return;
  Entry entry;
  entry.tokens.assign(prefix.begin(), prefix.end());
  bytes_ += checkpoint.bytes() + vector_bytes(entry.tokens);
  ++positions_[checkpoint.position];
  entry.checkpoint = std::make_shared<const Checkpoint>(std::move(checkpoint));
  lru_.push_front(key);
  entry.lru = lru_.begin();
  entries_.emplace(key, std::move(entry));
  while (bytes_ > budget_bytes_ && !lru_.empty()) {
    erase(lru_.back());
    ++evictions_;
  }
}

void PrefixCache::erase(uint64_t key) {
  const auto found = entries_.find(key);
  const Entry& entry = found->second;
  bytes_ -= entry.checkpoint->bytes() + vector_bytes(entry.tokens);
  const int64_t position = entry.checkpoint->position;
  if (--positions_[position] == 0) positions_.erase(position);
  lru_.erase(entry.lru);
  entries_.erase(found);
}

}  // namespace tern::runtime
