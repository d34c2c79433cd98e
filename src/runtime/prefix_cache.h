// A cache of sequence-state checkpoints keyed by the exact token prefix that produced them, for a
// hybrid model whose recurrent state cannot be rewound (docs/notes-serving.md): an entry holds the KV
// rows [0, p), the conv and recurrent state after token p, and, for a checkpoint taken at the end of a
// prompt, the logits of its last token. A lookup returns the longest entry whose tokens are a prefix
// of the query, so a hit is only ever used up to a position where a full state exists. Entries are
// evicted least recently used first under a byte budget. Not thread-safe: the engine thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/config.h"
#include "runtime/sequence_state.h"

namespace tern::runtime {

// The state of one sequence after its first `position` tokens, holding only the KV rows in use.
struct Checkpoint {
  int64_t position = 0;
  KvPrecision kv_precision = KvPrecision::kF16;
  std::vector<uint8_t> kv;  // SequenceState::save_kv(position): the stored rows, bit for bit
  std::vector<float> conv, recurrent;
  std::vector<float> last_logits;  // logits of token position−1, or empty

  size_t bytes() const;
};

// Copies the state's first `state.position()` KV rows and its GDN state.
Checkpoint capture_checkpoint(const SequenceState& state, const model::Config& config);
// Makes `state` continue from the checkpoint. Throws Error(kInput) if the checkpoint does not fit the
// state (precision, geometry or capacity).
void restore_checkpoint(const Checkpoint& checkpoint, const model::Config& config, SequenceState& state);

struct PrefixCacheStats {
  int64_t entries = 0;
  size_t bytes = 0;
  int64_t evictions = 0;
};

class PrefixCache {
 public:
  explicit PrefixCache(size_t budget_bytes) : budget_bytes_(budget_bytes) {}

  // The longest stored prefix of `tokens` usable to continue it: position < tokens.size(), or equal
  // when the entry carries the last logits. Null on a miss. Marks the entry recently used.
  std::shared_ptr<const Checkpoint> lookup(std::span<const int32_t> tokens);

  // Stores the checkpoint for `tokens[0, checkpoint.position)`, replacing an entry for the same prefix
  // (keeping logits if either has them), then evicts down to the budget. An entry larger than the
  // whole budget is not stored.
  void insert(std::span<const int32_t> tokens, Checkpoint checkpoint);

  bool contains(std::span<const int32_t> prefix) const;
  PrefixCacheStats stats() const { return {static_cast<int64_t>(entries_.size()), bytes_, evictions_}; }
  size_t budget_bytes() const { return budget_bytes_; }

 private:
  struct Entry {
    std::vector<int32_t> tokens;  // the exact prefix: a hash collision can never be a hit
    std::shared_ptr<const Checkpoint> checkpoint;
    std::list<uint64_t>::iterator lru;
  };

  void erase(uint64_t key);

  size_t budget_bytes_;
  size_t bytes_ = 0;
  int64_t evictions_ = 0;
  std::unordered_map<uint64_t, Entry> entries_;  // by prefix hash (length mixed in)
  std::list<uint64_t> lru_;                      // front: most recently used
  std::map<int64_t, int64_t> positions_;         // entry position → number of entries there
};

}  // namespace tern::runtime
