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
#include <memory>
#include <span>
#include <string_view>

#include "kernels/ops.h"
#include "model/forward.h"
#include "model/model.h"
#include "runtime/batch.h"
#include "runtime/sequence_state.h"

namespace tern {
class ThreadPool;
}

namespace tern::runtime {

// kRef: the fp32 oracle (kernels/ref). kCpu: kernels::cpu_ops on a pool the engine owns (PQ2_0 and
// PTQ1_0 matmuls on the int8 kernels, every other op on the oracle).
enum class Backend { kRef, kCpu };

// "ref" or "cpu"; Error(kInput) otherwise.
Backend parse_backend(std::string_view name);
const char* backend_name(Backend backend);

// The head's rows one step may ask for by default: 127 MB of scratch at a 248k vocabulary (1.8% of the
// 27B file), and room for a server's decode tokens and a scored prefill chunk (Scheduler).
inline constexpr int64_t kDefaultLogitRows = 128;

// The most tokens one step may take: far past any batch worth its scratch (≈ 0.5 MB a token at 27B widths),
// and near enough that the scratch's byte counts stay far from overflow.
inline constexpr int64_t kMaxBatchTokens = int64_t{1} << 24;

struct EngineOptions {
  int64_t max_batch_tokens = 512;  // Σ tokens of one step, 1..kMaxBatchTokens; its scratch must fit in memory
  // Σ logit rows of one step (0: kDefaultLogitRows), at most max_batch_tokens. A row is a whole
  // vocabulary (1 MB at 248k ids), so scoring (perplexity, prompt logprobs, tern logits) takes its rows
  // in steps of at most this many rather than holding a row for every token of a step.
  int64_t max_logit_rows = 0;
  int64_t gdn_chunk = 64;  // chunk length of the chunked GDN form (prefill)
  // The fast path is the default; it meets the argmax-agreement bar on every parity fixture
  // (tests/model/parity_test.cpp). The oracle stays selectable (--backend ref).
  Backend backend = Backend::kCpu;
  int threads = 0;  // pool size of the cpu backend; 0 means every allowed CPU (the ref backend: 0 or 1)
  bool pin_threads = false;  // pool thread t on the t-th allowed CPU (ThreadPool)
  // cpu backend only: every ternary matmul just reads its weights and outputs 0 (kernels::
  // cpu_read_only_ops). The outputs are meaningless; tern bench uses it to measure the ceiling a
  // kernel whose arithmetic cost nothing would reach.
  bool read_only_matmuls = false;
};

// Error(kInput) for compute options no engine honours: a negative thread count, or more than one thread or
// pinning asked of the ref backend, which computes on one thread. Commands call it before a model loads.
void check_compute_options(Backend backend, int threads, bool pin_threads);

class Engine {
 public:
  // The model must outlive the engine. Throws Error(kInput) for limits < 1 and for the compute options
  // check_compute_options refuses.
  explicit Engine(const model::Model& model, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const model::Model& model() const { return model_; }
  const model::ForwardLimits& limits() const { return scratch_.limits; }
  Backend backend() const { return backend_; }
  int threads() const;  // 1 for the ref backend
  // Logit rows the scratch holds: the most one step has asked for so far (model::Scratch), not
  // max_logit_rows, whose rows a decode loop never touches.
  int64_t logit_rows_held() const { return static_cast<int64_t>(scratch_.picks.size()); }

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
  Backend backend_;
  std::unique_ptr<ThreadPool> pool_;  // cpu backend only
  const kernels::Ops& ops_;
  model::Scratch scratch_;
};

}  // namespace tern::runtime
