// The one door into compute (design.md): Engine::step runs a batch of sequences, each contributing one
// decode token or a prefill chunk, and hands back the logits each asked for. The engine owns the op
// table and all scratch, sized at construction; a step allocates nothing.
//
// Usage:
//   auto model = model::Model::open("model.gguf");
//   runtime::Engine engine(*model);
//   runtime::SequenceState seq = engine.new_sequence(4096);
//   runtime::BatchItem item{&seq, prompt_ids, runtime::LogitsWanted::kLast};
//   engine.step({&item, 1});      // item.logits: [1][vocab], valid until the next step
#pragma once

#include <cstdint>
#include <span>

#include "kernels/ops.h"
#include "model/forward.h"
#include "model/model.h"
#include "runtime/batch.h"
#include "runtime/sequence_state.h"

namespace tern::runtime {

struct EngineOptions {
  int64_t max_batch_tokens = 512;  // Σ tokens of one step
  int64_t max_logit_rows = 0;      // Σ logit rows of one step; 0 means max_batch_tokens
  int64_t gdn_chunk = 64;          // chunk length of the chunked GDN form (prefill)
};

class Engine {
 public:
  // The model must outlive the engine. Throws Error(kInput) for limits < 1.
  explicit Engine(const model::Model& model, EngineOptions options = {});

  const model::Model& model() const { return model_; }
  const model::ForwardLimits& limits() const { return scratch_.limits; }

  // A fresh sequence for this model (position 0, zero state) holding up to `capacity` tokens.
  SequenceState new_sequence(int64_t capacity, KvPrecision kv = KvPrecision::kF16) const;

  // Validates the whole batch before touching any state, then runs it:
  //   Error(kInput): a null or foreign state, the same state twice, an empty token span, or a token id
  //                  outside the vocabulary or typed UNUSED;
  //   Error(kCapacity): a sequence would pass its capacity, or the batch exceeds max_batch_tokens or
  //                  max_logit_rows.
  // On success every item's state has advanced by its token count and item.logits is set.
  void step(std::span<BatchItem> batch);

 private:
  void validate(std::span<const BatchItem> batch) const;

  const model::Model& model_;
  const kernels::Ops& ops_;
  model::Scratch scratch_;
};

}  // namespace tern::runtime
