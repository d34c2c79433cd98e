// Continuous batching (design.md, vLLM v1 style): one engine thread owns the Engine and steps every
// running sequence together. Each step holds one decode token per generating sequence plus prefill
// chunks of admitted prompts within a token budget; rows exist only for live sequences, so a lone
// request pays nothing for the configured width. Requests wait in a bounded queue; cancel, deadline
// and shutdown free a sequence at the next step. Prefill chunks end on a fixed grid of `align` tokens
// (and at checkpoint positions), so a prompt is computed the same way alone, in a full batch, or
// resumed from a cached checkpoint on that grid; the PrefixCache gets a checkpoint every
// `checkpoint_interval` tokens and at the end of every prompt.
//
// Each sequence generates through a runtime::Generation (sampling, stop tokens and strings, detokenizing);
// reasoning and tool-call parsing are the consumer's business.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/engine.h"
#include "runtime/generation.h"
#include "runtime/prefix_cache.h"
#include "runtime/sampler.h"
#include "text/tokenizer.h"

namespace tern::runtime {

using Clock = std::chrono::steady_clock;

struct GenerationRequest {
  std::vector<int32_t> prompt;  // at least one token
  SamplingParams sampling;
  GenerationLimits limits;       // max tokens, end-of-generation ids, stop strings, logprobs
  bool prompt_logprobs = false;  // score the prompt (teacher forcing); bypasses the prefix cache
  // Thinking budget: inside a think block, after this many tokens the scheduler forces `think_close`
  // instead of sampling. < 0: unlimited.
  int64_t thinking_budget = -1;
  bool thinking_open = false;        // the prompt ends inside a think block
  int32_t think_end_token = -1;      // the token that closes a think block
  std::vector<int32_t> think_close;  // forced tokens closing it
  Clock::time_point deadline = Clock::time_point::max();
};

struct Timings {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens restored from the prefix cache
  int64_t generated_tokens = 0;
  double queue_seconds = 0;
  double prompt_seconds = 0;      // admission to first token
  double generation_seconds = 0;  // first token to the last
};

struct StreamEvent {
  uint64_t request = 0;                   // the scheduler's id of the request this event belongs to
  std::vector<GeneratedToken> tokens;     // generated, in order, with their visible text
  std::vector<Logprobs> prompt_logprobs;  // for prompt tokens 1..L−1, in order, over one or more events
  std::optional<FinishReason> finish;
  bool deadline_exceeded = false;  // with kCancelled
  std::string error;               // with kCancelled: the engine failed
  Timings timings;                 // final with `finish`
  Clock::time_point time;
};

// The consumer's end of one or more requests (the n choices of one API call share one stream).
class RequestStream {
 public:
  // Moves pending events into `out`; waits up to `timeout` if none. False if none arrived.
  bool wait(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout);

 private:
  friend class Scheduler;
  void push(uint64_t request, StreamEvent event);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<StreamEvent> events_;
};

struct SchedulerOptions {
  int64_t parallel = 4;    // most running sequences
  int64_t context = 4096;  // tokens each sequence holds
  KvPrecision kv = KvPrecision::kF16;
  int64_t max_batch_tokens = 512;     // Σ tokens of one step
  int64_t max_waiting = 64;           // queue bound
  int64_t align = 64;                 // prefill chunk grid
  int64_t checkpoint_interval = 256;  // a multiple of align
  size_t cache_bytes = 0;             // prefix cache budget; 0: off
};

// What a scheduler's states may take: every slot, and the prefix cache once it fills its budget. `what`
// names them for check_state_memory and mapped_weights_warning.
struct SchedulerMemory {
  uint64_t bytes = 0;
  std::string what;
};
SchedulerMemory scheduler_memory(const model::Config& config, const SchedulerOptions& options);

struct SchedulerStats {
  int64_t running = 0;
  int64_t waiting = 0;
  double kv_usage = 0;        // tokens held / tokens allocated
  int64_t prompt_tokens = 0;  // prompt tokens computed (not counting cache hits)
  int64_t generation_tokens = 0;
  int64_t cache_queries = 0;  // prompt tokens looked up
  int64_t cache_hits = 0;     // prompt tokens restored
  int64_t preemptions = 0;    // always 0: every sequence owns its slot for its lifetime
  int64_t steps = 0;
  PrefixCacheStats cache;
};

class Scheduler {
 public:
  // Allocates `parallel` sequences of `context` tokens (memory_bytes() says how much) and starts the
  // engine thread. Engine and tokenizer must outlive it. Throws Error(kInput) for inconsistent options,
  // Error(kCapacity) where the slots and the prefix cache's budget (scheduler_memory) would not fit in
  // the memory available.
  Scheduler(Engine& engine, const text::Tokenizer& tokenizer, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  enum class Admission { kAccepted, kQueueFull, kShuttingDown };
  // Queues a request; on kAccepted `id` is set and `stream` receives its events. Throws Error(kInput) for a
  // request that can never run (empty prompt, prompt longer than the context, bad token).
  Admission submit(GenerationRequest request, std::shared_ptr<RequestStream> stream, uint64_t& id);
  // Ends a request at the next step (waiting or running); its stream gets FinishReason::kCancelled.
  // False if no such request is live.
  bool cancel(uint64_t id);
  // Stops admitting; with `drain` lets running and waiting requests finish, else cancels them; returns
  // when the engine thread has ended.
  void shutdown(bool drain);

  SchedulerStats stats() const;
  size_t memory_bytes() const { return memory_bytes_; }
  const SchedulerOptions& options() const { return options_; }

 private:
  struct Sequence;

  void run();
  void admit(std::unique_lock<std::mutex>& lock);
  void start(Sequence& seq);
  void finish(Sequence& seq, FinishReason reason, std::string text = {}, std::string error = {},
              bool deadline = false);
  void step_once();
  // `argmax`: the engine's greedy pick of `logits` (BatchItem::argmax), or -1.
  void sample_and_emit(Sequence& seq, std::span<const float> logits, bool from_prefill, int32_t argmax = -1);
  void emit_prompt_logprobs(Sequence& seq, std::span<const float> logits, int64_t first_row, int64_t rows);
  int64_t prefill_end(const Sequence& seq, int64_t budget) const;

  Engine& engine_;
  const text::Tokenizer& tokenizer_;
  SchedulerOptions options_;
  std::vector<SequenceState> slots_;
  std::vector<int64_t> free_slots_;
  size_t memory_bytes_ = 0;
  PrefixCache cache_;
  std::vector<int32_t> banned_;  // ids the model does not accept: never sampled

  mutable std::mutex mutex_;  // guards the fields below up to `stop_`
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<uint64_t> cancelled_;
  std::unordered_set<uint64_t> live_;  // ids submitted and not finished
  uint64_t next_id_ = 1;
  bool accepting_ = true;
  bool drain_ = true;
  bool stop_ = false;
  SchedulerStats stats_;

  std::vector<std::unique_ptr<Sequence>> running_;  // engine thread only
  std::vector<float> logits_scratch_;
  std::thread thread_;
};

}  // namespace tern::runtime
