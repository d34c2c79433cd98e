#include "runtime/scheduler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace tern::runtime {

namespace {

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

bool RequestStream::wait(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (events_.empty()) ready_.wait_for(lock, timeout, [&] { return !events_.empty(); });
  if (events_.empty()) return false;
  for (StreamEvent& event : events_) out.push_back(std::move(event));
  events_.clear();
  return true;
}

void RequestStream::push(uint64_t request, StreamEvent event) {
  event.request = request;
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_all();
}

struct Scheduler::Sequence {
  Sequence(uint64_t id_, GenerationRequest request_, const text::Tokenizer& tokenizer,
           std::span<const int32_t> banned)
      : id(id_),
        request(std::move(request_)),
        generation(tokenizer, request.sampling, request.limits, request.prompt, banned),
        thinking(request.thinking_open) {}

  uint64_t id;
  GenerationRequest request;
  Generation generation;
  std::shared_ptr<RequestStream> stream;
  int64_t slot = -1;
  int64_t prefilled = 0;  // prompt tokens in the state
  bool decoding = false;
  bool done = false;
  int32_t next_token = 0;  // the last sampled token, fed by the next decode step
  int64_t generated = 0;
  bool thinking;
  int64_t thinking_tokens = 0;
  std::deque<int32_t> forced;
  std::shared_ptr<const Checkpoint> full_hit;  // a cached state for the whole prompt, with its logits
  Timings timings;
  Clock::time_point submitted, admitted, first_token, last_token;
};

SchedulerMemory scheduler_memory(const model::Config& config, const SchedulerOptions& options) {
  SchedulerMemory memory{.bytes = saturating_product(
                             sequence_state_bytes(config, options.context, options.kv), options.parallel),
                         .what = describe_states(options.parallel, options.context, options.kv)};
  if (options.cache_bytes > 0) {
    memory.bytes = saturating_sum(memory.bytes, options.cache_bytes);
    memory.what += fmt::format(" and a {} MiB prefix cache", options.cache_bytes >> 20);
  }
  return memory;
}

Scheduler::Scheduler(Engine& engine, const text::Tokenizer& tokenizer, SchedulerOptions options)
    : engine_(engine), tokenizer_(tokenizer), options_(options), cache_(options.cache_bytes) {
  if (options_.parallel < 1 || options_.context < 1 || options_.max_waiting < 0 || options_.align < 1 ||
      options_.checkpoint_interval < options_.align || options_.checkpoint_interval % options_.align != 0) {
    fail(ErrorKind::kInput,
         "scheduler: parallel ({}) and context ({}) must be >= 1, checkpoint interval ({}) a multiple of the "
         "chunk grid ({})",
         options_.parallel, options_.context, options_.checkpoint_interval, options_.align);
  }
  if (options_.max_batch_tokens > engine_.limits().max_tokens ||
      options_.max_batch_tokens < options_.parallel + options_.align) {
    fail(
        ErrorKind::kInput,
        "scheduler: batch budget {} must hold one decode token per sequence ({}) plus one prefill chunk ({}) "
        "and fit the engine's {}",
        options_.max_batch_tokens, options_.parallel, options_.align, engine_.limits().max_tokens);
  }
  if (engine_.limits().max_logit_rows < options_.parallel + options_.align) {
    fail(ErrorKind::kInput,
         "scheduler: the engine's {} logit rows a step must hold one a decoding sequence ({}) plus one "
         "scored prefill chunk ({})",
         engine_.limits().max_logit_rows, options_.parallel, options_.align);
  }
  if (static_cast<int64_t>(tokenizer_.size()) != engine_.model().config().vocab_size) {
    fail(ErrorKind::kInput, "scheduler: the tokenizer has {} tokens but the model {} logits",
         tokenizer_.size(), engine_.model().config().vocab_size);
  }
  const SchedulerMemory memory = scheduler_memory(engine_.model().config(), options_);
  check_state_memory(memory.bytes, memory.what);
  slots_.reserve(static_cast<size_t>(options_.parallel));
  for (int64_t i = 0; i < options_.parallel; ++i) {
    slots_.push_back(engine_.new_sequence(options_.context, options_.kv));
    memory_bytes_ += slots_.back().bytes();
    free_slots_.push_back(options_.parallel - 1 - i);
  }
  const model::Config& config = engine_.model().config();
  logits_scratch_.resize(static_cast<size_t>(config.vocab_size));
  for (int32_t id = 0; id < config.vocab_size; ++id) {
    if (!engine_.model().accepts_token(id)) banned_.push_back(id);
  }
  thread_ = std::thread([this] { run(); });
}

Scheduler::~Scheduler() {
  shutdown(false);
}

Scheduler::Admission Scheduler::submit(GenerationRequest request, std::shared_ptr<RequestStream> stream,
                                       uint64_t& id) {
  const auto length = static_cast<int64_t>(request.prompt.size());
  if (length < 1) fail(ErrorKind::kInput, "the prompt is empty");
  if (length > options_.context) {
    fail(ErrorKind::kInput, "the prompt has {} tokens, more than the context of {}", length,
         options_.context);
  }
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    if (!engine_.model().accepts_token(request.prompt[i])) {
      fail(ErrorKind::kInput, "prompt token {} at index {} is not a valid input id", request.prompt[i], i);
    }
  }
  std::unique_lock lock(mutex_);
  if (!accepting_) return Admission::kShuttingDown;
  if (waiting_.size() >= static_cast<size_t>(options_.max_waiting) + free_slots_.size()) {
    return Admission::kQueueFull;
  }
  auto seq = std::make_unique<Sequence>(next_id_++, std::move(request), tokenizer_, banned_);
  live_.insert(seq->id);
  seq->submitted = Clock::now();
  seq->stream = std::move(stream);
  id = seq->id;
  waiting_.push_back(std::move(seq));
  stats_.waiting = static_cast<int64_t>(waiting_.size());
  lock.unlock();
  wake_.notify_all();
  return Admission::kAccepted;
}

bool Scheduler::cancel(uint64_t id) {
  std::unique_lock lock(mutex_);
  const auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& s) { return s->id == id; });
  if (it != waiting_.end()) {
    std::unique_ptr<Sequence> seq = std::move(*it);
    waiting_.erase(it);
    live_.erase(id);
    stats_.waiting = static_cast<int64_t>(waiting_.size());
    lock.unlock();
    StreamEvent event;
    event.finish = FinishReason::kCancelled;
    event.time = Clock::now();
    seq->stream->push(seq->id, std::move(event));
    return true;
  }
  // Running sequences are only touched by the engine thread; it picks the id up before its next step.
  if (!live_.contains(id)) return false;
  cancelled_.push_back(id);
  lock.unlock();
  wake_.notify_all();
  return true;
}

void Scheduler::shutdown(bool drain) {
  {
    std::lock_guard lock(mutex_);
    accepting_ = false;
    drain_ = drain_ && drain;
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Scheduler::run() {
  std::vector<std::unique_ptr<Sequence>> admitted;
  while (true) {
    std::vector<uint64_t> cancelled;
    bool cancel_all = false;
    {
      std::unique_lock lock(mutex_);
      const bool busy = !running_.empty();
      const auto idle = [&] { return stop_ || !waiting_.empty() || !cancelled_.empty(); };
      if (!busy) wake_.wait_for(lock, std::chrono::milliseconds(50), idle);
      if (stop_ && !drain_) cancel_all = true;
      if (stop_ && running_.empty() && (waiting_.empty() || cancel_all)) {
        for (auto& seq : waiting_) {
          StreamEvent event;
          event.finish = FinishReason::kCancelled;
          event.time = Clock::now();
          seq->stream->push(seq->id, std::move(event));
          live_.erase(seq->id);
        }
        waiting_.clear();
        break;
      }
      cancelled.swap(cancelled_);
      const Clock::time_point now = Clock::now();
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        if ((*it)->request.deadline <= now || cancel_all) {
          StreamEvent event;
          event.finish = FinishReason::kCancelled;
          event.deadline_exceeded = !cancel_all;
          event.time = now;
          (*it)->stream->push((*it)->id, std::move(event));
          live_.erase((*it)->id);
          it = waiting_.erase(it);
        } else {
          ++it;
        }
      }
      while (!waiting_.empty() && !free_slots_.empty()) {
        std::unique_ptr<Sequence> seq = std::move(waiting_.front());
        waiting_.pop_front();
        seq->slot = free_slots_.back();
        free_slots_.pop_back();
        admitted.push_back(std::move(seq));
        ++stats_.running;
      }
      stats_.waiting = static_cast<int64_t>(waiting_.size());
    }
    const Clock::time_point now = Clock::now();
    for (auto& seq : running_) {
      if (cancel_all || std::find(cancelled.begin(), cancelled.end(), seq->id) != cancelled.end()) {
        finish(*seq, FinishReason::kCancelled, seq->generation.cancel());
      } else if (seq->request.deadline <= now) {
        finish(*seq, FinishReason::kCancelled, seq->generation.cancel(), {}, true);
      }
    }
    for (auto& seq : admitted) {
      running_.push_back(std::move(seq));
      start(*running_.back());
    }
    admitted.clear();
    step_once();
    std::erase_if(running_, [](const auto& seq) { return seq->done; });
    int64_t held = 0;
    for (const auto& seq : running_) held += slots_[static_cast<size_t>(seq->slot)].position();
    std::lock_guard lock(mutex_);
    stats_.kv_usage = static_cast<double>(held) / static_cast<double>(options_.parallel * options_.context);
    stats_.cache = cache_.stats();
  }
}

void Scheduler::start(Sequence& seq) {
  seq.admitted = Clock::now();
  seq.timings.queue_seconds = seconds_between(seq.submitted, seq.admitted);
  seq.timings.prompt_tokens = static_cast<int64_t>(seq.request.prompt.size());
  SequenceState& state = slots_[static_cast<size_t>(seq.slot)];
  state.reset();
  if (options_.cache_bytes == 0 || seq.request.prompt_logprobs) return;
  const std::shared_ptr<const Checkpoint> hit = cache_.lookup(seq.request.prompt);
  {
    std::lock_guard lock(mutex_);
    stats_.cache_queries += seq.timings.prompt_tokens;
    if (hit) stats_.cache_hits += hit->position;
  }
  if (!hit) return;
  restore_checkpoint(*hit, engine_.model().config(), state);
  seq.prefilled = hit->position;
  seq.timings.cached_tokens = hit->position;
  if (hit->position == seq.timings.prompt_tokens) {
    seq.full_hit = hit;
    sample_and_emit(seq, hit->last_logits, true);
  }
}

void Scheduler::finish(Sequence& seq, FinishReason reason, std::string text, std::string error,
                       bool deadline) {
  if (seq.done) return;
  seq.done = true;
  StreamEvent event;
  if (!text.empty()) {
    GeneratedToken tail;
    tail.token = -1;
    tail.text = std::move(text);
    event.tokens.push_back(std::move(tail));
  }
  event.finish = reason;
  event.deadline_exceeded = deadline;
  event.error = std::move(error);
  event.time = Clock::now();
  seq.timings.generated_tokens = seq.generated;
  if (seq.generated > 0) seq.timings.generation_seconds = seconds_between(seq.first_token, seq.last_token);
  event.timings = seq.timings;
  {
    std::lock_guard lock(mutex_);
    free_slots_.push_back(seq.slot);
    live_.erase(seq.id);
    --stats_.running;  // counted at admission; updated before the final event, so a consumer sees it
  }
  seq.stream->push(seq.id, std::move(event));
}

int64_t Scheduler::prefill_end(const Sequence& seq, int64_t budget) const {
  const auto length = static_cast<int64_t>(seq.request.prompt.size());
  const int64_t limit = seq.prefilled + budget;
  // Chunks end on the grid and stop at every checkpoint position, whatever the load, so the same
  // prompt is always cut the same way.
  const int64_t next_checkpoint =
      (seq.prefilled / options_.checkpoint_interval + 1) * options_.checkpoint_interval;
  if (length <= std::min(limit, next_checkpoint)) return length;
  const int64_t end = std::min(limit / options_.align * options_.align, next_checkpoint);
  return std::max(end, seq.prefilled);
}

void Scheduler::step_once() {
  std::vector<BatchItem> batch;
  std::vector<Sequence*> owners;
  std::vector<int64_t> ends;
  int64_t budget = options_.max_batch_tokens;
  int64_t logit_rows = engine_.limits().max_logit_rows;  // the constructor keeps it ≥ parallel + align
  for (auto& seq : running_) {
    if (seq->done || !seq->decoding) continue;
    batch.push_back({&slots_[static_cast<size_t>(seq->slot)],
                     {&seq->next_token, 1},
                     LogitsWanted::kLast,
                     true,
                     seq->generation.argmax_decides()});
    owners.push_back(seq.get());
    ends.push_back(0);
    --budget;
    --logit_rows;
  }
  for (auto& seq : running_) {
    if (seq->done || seq->decoding || budget <= 0) continue;
    // A prompt scored token by token takes no more tokens than there are logit rows left.
    const bool scored = seq->request.prompt_logprobs;
    const int64_t end = prefill_end(*seq, scored ? std::min(budget, logit_rows) : budget);
    if (end <= seq->prefilled) continue;
    const auto length = static_cast<int64_t>(seq->request.prompt.size());
    const LogitsWanted want = scored          ? LogitsWanted::kAll
                              : end == length ? LogitsWanted::kLast
                                              : LogitsWanted::kNone;
    const std::span<const int32_t> tokens(seq->request.prompt.data() + seq->prefilled,
                                          static_cast<size_t>(end - seq->prefilled));
    const BatchItem item{&slots_[static_cast<size_t>(seq->slot)], tokens, want, false,
                         seq->generation.argmax_decides()};
    if (item.logit_rows() > logit_rows) continue;  // the prompt's last row waits for the next step
    logit_rows -= item.logit_rows();
    batch.push_back(item);
    owners.push_back(seq.get());
    ends.push_back(end);
    budget -= end - seq->prefilled;
  }
  if (batch.empty()) return;
  try {
    engine_.step(batch);
  } catch (const std::exception& e) {
    for (Sequence* seq : owners) finish(*seq, FinishReason::kCancelled, seq->generation.cancel(), e.what());
    return;
  }
  int64_t prompt_tokens = 0;
  const auto vocab = static_cast<size_t>(engine_.model().config().vocab_size);
  for (size_t i = 0; i < batch.size(); ++i) {
    Sequence& seq = *owners[i];
    const BatchItem& item = batch[i];
    if (seq.decoding) {
      sample_and_emit(seq, item.logits, false, item.argmax);
      continue;
    }
    const int64_t start = seq.prefilled;
    const int64_t end = ends[i];
    prompt_tokens += end - start;
    seq.prefilled = end;
    if (seq.request.prompt_logprobs) emit_prompt_logprobs(seq, item.logits, start, end - start);
    const auto length = static_cast<int64_t>(seq.request.prompt.size());
    const std::span<const float> last_row =
        item.logits.empty() ? item.logits : item.logits.subspan(item.logits.size() - vocab, vocab);
    const bool cacheable = options_.cache_bytes > 0 && !seq.request.prompt_logprobs;
    const SequenceState& state = slots_[static_cast<size_t>(seq.slot)];
    if (cacheable && (end == length || end % options_.checkpoint_interval == 0) &&
        !(end < length && cache_.contains(std::span(seq.request.prompt).first(static_cast<size_t>(end))))) {
      Checkpoint checkpoint = capture_checkpoint(state, engine_.model().config());
      if (end == length) checkpoint.last_logits.assign(last_row.begin(), last_row.end());
      cache_.insert(seq.request.prompt, std::move(checkpoint));
    }
    if (end == length) sample_and_emit(seq, last_row, true, item.argmax);
  }
  std::lock_guard lock(mutex_);
  stats_.prompt_tokens += prompt_tokens;
  ++stats_.steps;
}

void Scheduler::emit_prompt_logprobs(Sequence& seq, std::span<const float> logits, int64_t first_row,
                                     int64_t rows) {
  // Row r holds the distribution of prompt token first_row + r + 1.
  const auto vocab = static_cast<size_t>(engine_.model().config().vocab_size);
  const auto length = static_cast<int64_t>(seq.request.prompt.size());
  StreamEvent event;
  event.time = Clock::now();
  for (int64_t r = 0; r < rows && first_row + r + 1 < length; ++r) {
    const auto row = logits.subspan(static_cast<size_t>(r) * vocab, vocab);
    const int32_t token = seq.request.prompt[static_cast<size_t>(first_row + r + 1)];
    event.prompt_logprobs.push_back(
        compute_logprobs(row, token, std::max(seq.request.limits.top_logprobs, 0)));
  }
  if (!event.prompt_logprobs.empty()) seq.stream->push(seq.id, std::move(event));
}

void Scheduler::sample_and_emit(Sequence& seq, std::span<const float> logits, bool from_prefill,
                                int32_t argmax) {
  const Clock::time_point now = Clock::now();
  if (from_prefill) {
    seq.first_token = now;
    seq.timings.prompt_seconds = seconds_between(seq.admitted, now);
  }
  seq.last_token = now;
  const GenerationRequest& request = seq.request;
  if (seq.forced.empty() && seq.thinking && request.thinking_budget >= 0 &&
      seq.thinking_tokens >= request.thinking_budget) {
    seq.forced.assign(request.think_close.begin(), request.think_close.end());
  }
  GeneratedToken generated;
  if (seq.forced.empty()) {
    generated = seq.generation.next(logits, argmax, logits_scratch_);
  } else {
    // A forced token is the only one left to choose from: it goes through the same Generation (text,
    // stop conditions) as a sampled one.
    const auto forced = static_cast<size_t>(seq.forced.front());
    seq.forced.pop_front();
    std::fill(logits_scratch_.begin(), logits_scratch_.end(), -INFINITY);
    logits_scratch_[forced] = logits[forced];
    generated = seq.generation.next(logits_scratch_);
  }
  const int32_t token = generated.token;
  if (seq.thinking) {
    ++seq.thinking_tokens;
    if (token == request.think_end_token) seq.thinking = false;
  }
  ++seq.generated;
  {
    std::lock_guard lock(mutex_);
    ++stats_.generation_tokens;
  }
  const SequenceState& state = slots_[static_cast<size_t>(seq.slot)];
  FinishReason reason = generated.finish;
  std::string tail;
  if (reason == FinishReason::kNone && state.position() >= state.capacity()) {
    tail = seq.generation.cancel();  // the context is full
    reason = FinishReason::kLength;
  }
  StreamEvent event;
  event.time = now;
  event.tokens.push_back(std::move(generated));
  seq.stream->push(seq.id, std::move(event));
  if (reason != FinishReason::kNone) {
    finish(seq, reason, std::move(tail));
    return;
  }
  seq.next_token = token;
  seq.decoding = true;
}

}  // namespace tern::runtime
