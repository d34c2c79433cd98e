#include "runtime/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/available_memory.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/cpu_ops.h"

namespace tern::runtime {

namespace {

model::ForwardLimits make_limits(const EngineOptions& options) {
  model::ForwardLimits limits;
  limits.max_tokens = options.max_batch_tokens;
  // A step has no more logit rows than tokens.
  limits.max_logit_rows = std::min(options.max_batch_tokens,
                                   options.max_logit_rows == 0 ? kDefaultLogitRows : options.max_logit_rows);
  limits.gdn_chunk = options.gdn_chunk;
  if (limits.max_tokens < 1 || limits.max_logit_rows < 1 || limits.gdn_chunk < 1) {
    fail(ErrorKind::kInput,
         "engine limits must be positive: max_batch_tokens {}, max_logit_rows {}, gdn_chunk {}",
         limits.max_tokens, limits.max_logit_rows, limits.gdn_chunk);
  }
  if (limits.max_tokens > kMaxBatchTokens) {
    fail(ErrorKind::kInput, "engine: {} tokens a step is past the {} it takes", limits.max_tokens,
         kMaxBatchTokens);
  }
  return limits;
}

// The scratch is zero-filled when made, so one past the memory available would end in the OOM killer.
model::ForwardLimits checked_limits(const model::Config& config, const EngineOptions& options,
                                    const kernels::Ops& ops) {
  const model::ForwardLimits limits = make_limits(options);
  require_memory(model::Scratch::bytes_at_most(config, limits, ops),
                 fmt::format("engine buffers for steps of {} tokens and {} logit rows", limits.max_tokens,
                             limits.max_logit_rows));
  return limits;
}

std::unique_ptr<ThreadPool> make_pool(const EngineOptions& options) {
  check_compute_options(options.backend, options.threads, options.pin_threads);
  if (options.backend != Backend::kCpu) return nullptr;
  return std::make_unique<ThreadPool>(ThreadPool::resolve(options.threads), options.pin_threads);
}

const kernels::Ops& select_ops(ThreadPool* pool, const EngineOptions& options) {
  if (options.read_only_matmuls) {
    if (pool == nullptr) fail(ErrorKind::kInput, "read-only matmuls need the cpu backend");
    return kernels::cpu_read_only_ops(*pool);
  }
  return pool != nullptr ? kernels::cpu_ops(*pool) : kernels::reference_ops();
}

}  // namespace

void check_compute_options(Backend backend, int threads, bool pin_threads) {
  if (threads < 0) fail(ErrorKind::kInput, "engine threads must be >= 0, got {}", threads);
  if (backend != Backend::kRef) return;
  if (threads > 1)
    fail(ErrorKind::kInput, "-t {}: the ref backend computes on one thread (give -t 0 or 1)", threads);
  if (pin_threads)
    fail(ErrorKind::kInput, "--pin: the ref backend computes on one thread, with no pool to pin");
}

Backend parse_backend(std::string_view name) {
  if (name == "ref") return Backend::kRef;
  if (name == "cpu") return Backend::kCpu;
  fail(ErrorKind::kInput, "backend must be ref or cpu, not '{}'", name);
}

const char* backend_name(Backend backend) {
  return backend == Backend::kRef ? "ref" : "cpu";
}

Engine::Engine(const model::Model& model, EngineOptions options)
    : model_(model),
      backend_(options.backend),
      pool_(make_pool(options)),
      ops_(select_ops(pool_.get(), options)),
      scratch_(model.config(), checked_limits(model.config(), options, ops_), ops_) {}

Engine::~Engine() = default;

int Engine::threads() const {
  return pool_ ? pool_->size() : 1;
}

SequenceState Engine::new_sequence(int64_t capacity, KvPrecision kv) const {
  return SequenceState(model_.config(), capacity, kv);
}

void Engine::validate(std::span<const BatchItem> batch) const {
  int64_t tokens = 0;
  int64_t logit_rows = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchItem& item = batch[i];
    if (item.state == nullptr || !item.state->fits(model_.config())) {
      fail(ErrorKind::kInput, "batch item {}: no sequence state, or one made for another model", i);
    }
    for (size_t j = 0; j < i; ++j) {
      if (batch[j].state == item.state)
        fail(ErrorKind::kInput, "batch items {} and {} share one sequence", j, i);
    }
    if (item.tokens.empty()) fail(ErrorKind::kInput, "batch item {}: no tokens", i);
    if (item.decoding && i > 0 && !batch[i - 1].decoding)
      fail(ErrorKind::kInput, "batch item {}: a decode item after a prompt item (decode items come first)",
           i);
    for (size_t t = 0; t < item.tokens.size(); ++t) {
      if (!model_.accepts_token(item.tokens[t])) {
        fail(ErrorKind::kInput,
             "batch item {}: token {} at index {} is outside the vocabulary (0..{}) or unused", i,
             item.tokens[t], t, model_.config().vocab_size - 1);
      }
    }
    const int64_t count = static_cast<int64_t>(item.tokens.size());
    if (count > item.state->capacity() - item.state->position()) {
      fail(ErrorKind::kCapacity, "batch item {}: {} tokens at position {} exceed the sequence capacity {}", i,
           count, item.state->position(), item.state->capacity());
    }
    tokens += count;
    logit_rows += item.logit_rows();
  }
  if (tokens > scratch_.limits.max_tokens) {
    fail(ErrorKind::kCapacity, "batch of {} tokens exceeds max_batch_tokens {}", tokens,
         scratch_.limits.max_tokens);
  }
  if (logit_rows > scratch_.limits.max_logit_rows) {
    fail(ErrorKind::kCapacity, "batch wants {} logit rows, more than max_logit_rows {}", logit_rows,
         scratch_.limits.max_logit_rows);
  }
}

void Engine::step(std::span<BatchItem> batch) {
  validate(batch);
  for (BatchItem& item : batch) {
    item.logits = {};
    item.argmax = -1;
  }
  if (batch.empty()) return;
  if (pool_) kernels::cpu_ops(*pool_);  // binds this engine's pool for this thread (either cpu table)
  model::forward(model_, ops_, batch, scratch_);
}

}  // namespace tern::runtime
