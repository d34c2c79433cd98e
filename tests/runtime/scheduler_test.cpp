// Scheduler and PrefixCache on the synthetic tiny model: checkpoint restore is bit-exact, a cached
// prefix gives the same logprobs and tokens as a cold run, a request gives the same tokens alone and in
// a full batch, cancel frees the sequence, and the queue is bounded.
#include "runtime/scheduler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <random>

#include "core/error.h"
#include "model/model.h"
#include "runtime/engine.h"
#include "runtime/logprobs.h"
#include "tests/support/process_temp.h"
#include "text/tokenizer.h"
#include "text/vocab.h"
#include "tools/synth.h"
#include "tools/synth_spec.h"
#include "tools/synth_vocab.h"

namespace tern::runtime {
namespace {

using namespace std::chrono_literals;

class SchedulerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(testing_support::process_temp_path("scheduler_tiny.gguf"));
    const tools::SynthSpec spec = tools::synth_preset("tiny");
    tools::SynthOptions options;
    options.out_path = *path_;
    tools::write_synth_model(spec, tools::builtin_vocab(spec.vocab), options);
    model_ = model::Model::open(*path_).release();
    tokenizer_ = new text::Tokenizer(text::load_vocab(model_->file()));
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete model_;
    delete path_;
  }

  static std::vector<int32_t> prompt(size_t length, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> ids;
    while (ids.size() < length) {
      const auto id = static_cast<int32_t>(rng() % 1024);
      if (model_->accepts_token(id)) ids.push_back(id);
    }
    return ids;
  }

  struct Outcome {
    std::vector<int32_t> tokens;
    std::vector<float> logprobs;
    FinishReason finish = FinishReason::kNone;
    Timings timings;
  };

  // Collects every event of the requests on `stream` until each has finished.
  static std::map<uint64_t, Outcome> collect(RequestStream& stream, size_t requests) {
    std::map<uint64_t, Outcome> outcomes;
    size_t finished = 0;
    std::vector<StreamEvent> events;
    while (finished < requests) {
      events.clear();
      stream.wait(events, 1000ms);
      for (const StreamEvent& e : events) {
        Outcome& o = outcomes[e.request];
        for (const GeneratedToken& t : e.tokens) {
          if (t.token < 0) continue;  // text released at the end
          o.tokens.push_back(t.token);
          if (t.logprobs) o.logprobs.push_back(t.logprobs->chosen.logprob);
        }
        if (e.finish) {
          o.finish = *e.finish;
          o.timings = e.timings;
          ++finished;
        }
      }
    }
    return outcomes;
  }

  static Outcome run_alone(Scheduler& scheduler, GenerationRequest request) {
    auto stream = std::make_shared<RequestStream>();
    uint64_t id = 0;
    EXPECT_EQ(scheduler.submit(std::move(request), stream, id), Scheduler::Admission::kAccepted);
    return collect(*stream, 1).at(id);
  }

  static GenerationRequest greedy(std::vector<int32_t> ids, int64_t max_tokens) {
    GenerationRequest request;
    request.prompt = std::move(ids);
    request.limits.max_tokens = max_tokens;
    request.limits.top_logprobs = 0;
    return request;
  }

  static inline std::string* path_ = nullptr;
  static inline const model::Model* model_ = nullptr;
  static inline const text::Tokenizer* tokenizer_ = nullptr;
};

TEST_F(SchedulerTest, CheckpointRestoreGivesBitIdenticalLogits) {
  Engine engine(*model_);
  const std::vector<int32_t> ids = prompt(300, 1);
  const auto vocab = static_cast<size_t>(model_->config().vocab_size);
  const std::span<const int32_t> all(ids);

  for (KvPrecision kv : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8}) {
    SCOPED_TRACE(kv_precision_name(kv));
    SequenceState cold = engine.new_sequence(512, kv);
    BatchItem first{&cold, all.first(256), LogitsWanted::kNone};
    engine.step({&first, 1});
    const Checkpoint checkpoint = capture_checkpoint(cold, model_->config());
    EXPECT_EQ(checkpoint.position, 256);
    EXPECT_EQ(checkpoint.kv, cold.save_kv(256));
    BatchItem rest{&cold, all.subspan(256), LogitsWanted::kLast};
    engine.step({&rest, 1});
    const std::vector<float> cold_logits(rest.logits.begin(), rest.logits.end());

    SequenceState warm = engine.new_sequence(512, kv);
    BatchItem garbage{&warm, all.subspan(100, 30), LogitsWanted::kNone};  // state to be overwritten
    engine.step({&garbage, 1});
    restore_checkpoint(checkpoint, model_->config(), warm);
    EXPECT_EQ(warm.position(), 256);
    EXPECT_EQ(warm.save_kv(256), checkpoint.kv);
    BatchItem warm_rest{&warm, all.subspan(256), LogitsWanted::kLast};
    engine.step({&warm_rest, 1});
    ASSERT_EQ(warm_rest.logits.size(), vocab);
    EXPECT_EQ(std::memcmp(warm_rest.logits.data(), cold_logits.data(), vocab * sizeof(float)), 0);

    SequenceState other =
        engine.new_sequence(512, kv == KvPrecision::kQ8 ? KvPrecision::kF16 : KvPrecision::kQ8);
    EXPECT_THROW(restore_checkpoint(checkpoint, model_->config(), other), Error);
  }
}

// The slots together are checked against the memory available before the first is allocated: 256 of
// 2^32 tokens of the tiny model's KV are far past any machine's memory.
TEST_F(SchedulerTest, RefusesSlotsPastTheMemoryAvailable) {
  Engine engine(*model_, EngineOptions{.max_logit_rows = 256 + 64});
  SchedulerOptions options;
  options.parallel = 256;
  options.context = int64_t{1} << 32;
  options.max_batch_tokens = 512;
  try {
    Scheduler scheduler(engine, *tokenizer_, options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_NE(std::string(e.what()).find("256 sequences of 4294967296 tokens (f16 KV): "), std::string::npos)
        << e.what();
  }
}

// The prefix cache fills its budget as requests finish, so the budget is checked with the slots at start:
// one small slot beside a 1 PiB cache is refused, and the message names the cache.
TEST_F(SchedulerTest, RefusesAPrefixCacheBudgetPastTheMemoryAvailable) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 1;
  options.context = 256;
  options.cache_bytes = size_t{1} << 50;
  try {
    Scheduler scheduler(engine, *tokenizer_, options);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_NE(
        std::string(e.what()).find("1 sequence of 256 tokens (f16 KV) and a 1073741824 MiB prefix cache: "),
        std::string::npos)
        << e.what();
  }
  options.cache_bytes = size_t{1} << 20;
  EXPECT_NO_THROW(Scheduler(engine, *tokenizer_, options));
  const SchedulerMemory memory = scheduler_memory(model_->config(), options);
  EXPECT_EQ(memory.bytes, sequence_state_bytes(model_->config(), 256, KvPrecision::kF16) + (size_t{1} << 20));
}

TEST_F(SchedulerTest, RestoreRefusesACheckpointLongerThanTheSequence) {
  Engine engine(*model_);
  SequenceState big = engine.new_sequence(64);
  const std::vector<int32_t> ids = prompt(40, 2);
  BatchItem item{&big, ids, LogitsWanted::kNone};
  engine.step({&item, 1});
  const Checkpoint checkpoint = capture_checkpoint(big, model_->config());
  SequenceState small = engine.new_sequence(16);
  EXPECT_THROW(restore_checkpoint(checkpoint, model_->config(), small), Error);
}

TEST(PrefixCacheTest, LongestStoredPrefixWinsAndTokensMustMatch) {
  PrefixCache cache(1 << 20);
  const std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 10};
  Checkpoint at2;
  at2.position = 2;
  Checkpoint at4;
  at4.position = 4;
  cache.insert(tokens, at2);
  cache.insert(tokens, at4);
  EXPECT_EQ(cache.lookup(tokens)->position, 4);
  const std::vector<int32_t> diverges_at_3 = {5, 6, 7, 0, 9, 10};
  EXPECT_EQ(cache.lookup(diverges_at_3)->position, 2);
  const std::vector<int32_t> other = {1, 2, 3};
  EXPECT_EQ(cache.lookup(other), nullptr);
  // A whole-prompt entry is usable for that prompt only with its last logits.
  const std::vector<int32_t> four(tokens.begin(), tokens.begin() + 4);
  EXPECT_EQ(cache.lookup(four)->position, 2);
  Checkpoint with_logits;
  with_logits.position = 4;
  with_logits.last_logits = {0.5f};
  cache.insert(four, with_logits);
  EXPECT_EQ(cache.lookup(four)->position, 4);
  EXPECT_EQ(cache.stats().entries, 2);
}

TEST(PrefixCacheTest, EvictsLeastRecentlyUsedUnderTheBudget) {
  Checkpoint probe;
  probe.position = 1;
  probe.conv.resize(1000);
  const size_t entry = probe.bytes() + sizeof(int32_t);
  PrefixCache cache(entry * 2 + entry / 2);  // room for two entries
  const std::vector<int32_t> a = {1}, b = {2}, c = {3};
  // Queries one token longer than the entries, which carry no logits.
  const std::vector<int32_t> after_a = {1, 9}, after_b = {2, 9}, after_c = {3, 9};
  cache.insert(a, probe);
  cache.insert(b, probe);
  EXPECT_NE(cache.lookup(after_a), nullptr);  // a is now more recent than b
  cache.insert(c, probe);
  EXPECT_NE(cache.lookup(after_a), nullptr);
  EXPECT_EQ(cache.lookup(after_b), nullptr);
  EXPECT_NE(cache.lookup(after_c), nullptr);
  EXPECT_EQ(cache.stats().evictions, 1);
  EXPECT_LE(cache.stats().bytes, cache.budget_bytes());
}

TEST_F(SchedulerTest, CachedPrefixGivesIdenticalTokensAndLogprobs) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 2;
  options.context = 1024;
  options.cache_bytes = 64 << 20;
  Scheduler scheduler(engine, *tokenizer_, options);
  const std::vector<int32_t> a = prompt(300, 3), b = prompt(200, 4);

  const Outcome cold = run_alone(scheduler, greedy(a, 12));
  EXPECT_EQ(cold.timings.cached_tokens, 0);
  const Outcome other = run_alone(scheduler, greedy(b, 12));
  EXPECT_EQ(other.timings.cached_tokens, 0);
  const Outcome again = run_alone(scheduler, greedy(a, 12));  // A/B/A
  EXPECT_EQ(again.timings.cached_tokens, 300);
  EXPECT_EQ(again.tokens, cold.tokens);
  EXPECT_EQ(again.logprobs, cold.logprobs);

  // A longer prompt sharing A's first 256 tokens resumes from the checkpoint on the grid, and matches a
  // cold run of it in a scheduler without a cache.
  std::vector<int32_t> extended(a.begin(), a.begin() + 256);
  const std::vector<int32_t> tail = prompt(90, 5);
  extended.insert(extended.end(), tail.begin(), tail.end());
  const Outcome resumed = run_alone(scheduler, greedy(extended, 12));
  EXPECT_EQ(resumed.timings.cached_tokens, 256);
  SchedulerOptions no_cache = options;
  no_cache.cache_bytes = 0;
  Scheduler cold_scheduler(engine, *tokenizer_, no_cache);
  const Outcome reference = run_alone(cold_scheduler, greedy(extended, 12));
  EXPECT_EQ(reference.timings.cached_tokens, 0);
  EXPECT_EQ(resumed.tokens, reference.tokens);
  EXPECT_EQ(resumed.logprobs, reference.logprobs);

  const SchedulerStats stats = scheduler.stats();
  EXPECT_EQ(stats.cache_queries, 300 + 200 + 300 + 346);
  EXPECT_EQ(stats.cache_hits, 300 + 256);
}

TEST_F(SchedulerTest, RequestGivesTheSameTokensAloneAndInAFullBatch) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 8;
  options.context = 512;
  Scheduler scheduler(engine, *tokenizer_, options);
  const std::vector<int32_t> probe = prompt(150, 6);
  const Outcome alone = run_alone(scheduler, greedy(probe, 16));
  ASSERT_EQ(alone.tokens.size(), 16u);

  auto stream = std::make_shared<RequestStream>();
  uint64_t probe_id = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    uint64_t id = 0;
    GenerationRequest request = i == 3 ? greedy(probe, 16) : greedy(prompt(40 + 30 * i, 10 + i), 16);
    ASSERT_EQ(scheduler.submit(std::move(request), stream, id), Scheduler::Admission::kAccepted);
    if (i == 3) probe_id = id;
  }
  const auto outcomes = collect(*stream, 8);
  EXPECT_EQ(outcomes.at(probe_id).tokens, alone.tokens);
  EXPECT_EQ(outcomes.at(probe_id).logprobs, alone.logprobs);
  EXPECT_GT(scheduler.stats().steps, 0);
}

// Without logprobs a greedy request takes the engine's fused pick (BatchItem::argmax) instead of the row;
// with them, the row through the sampler. Both give the same tokens, alone and beside sampled requests.
TEST_F(SchedulerTest, FusedGreedyPickGivesTheTokensOfTheRow) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 4;
  options.context = 512;
  Scheduler scheduler(engine, *tokenizer_, options);
  const std::vector<int32_t> probe = prompt(120, 31);
  const Outcome by_row = run_alone(scheduler, greedy(probe, 20));
  ASSERT_EQ(by_row.tokens.size(), 20u);
  GenerationRequest plain = greedy(probe, 20);
  plain.limits.top_logprobs = -1;
  const Outcome by_pick = run_alone(scheduler, plain);
  EXPECT_EQ(by_pick.tokens, by_row.tokens);
  EXPECT_TRUE(by_pick.logprobs.empty());

  auto stream = std::make_shared<RequestStream>();
  uint64_t probe_id = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    GenerationRequest request = greedy(prompt(30 + 20 * i, 40 + i), 20);
    request.limits.top_logprobs = -1;
    if (i % 2 == 1) request.sampling.temperature = 0.8f;
    if (i == 2) request = plain;
    uint64_t id = 0;
    ASSERT_EQ(scheduler.submit(std::move(request), stream, id), Scheduler::Admission::kAccepted);
    if (i == 2) probe_id = id;
  }
  EXPECT_EQ(collect(*stream, 4).at(probe_id).tokens, by_row.tokens);
}

// A scored prompt (prompt logprobs) takes its rows in steps of the engine's logit rows left after the
// decoding sequences, so the head's scratch never holds a row for every token of a step; the logprobs
// are those of the whole prompt's rows in one step.
TEST_F(SchedulerTest, ScoredPromptTakesNoMoreRowsThanTheEngineHolds) {
  SchedulerOptions options;
  options.parallel = 2;
  options.context = 512;
  const int64_t rows = options.parallel + options.align;
  Engine engine(*model_, EngineOptions{.max_logit_rows = rows});
  Scheduler scheduler(engine, *tokenizer_, options);
  const std::vector<int32_t> scored = prompt(300, 51);

  auto stream = std::make_shared<RequestStream>();
  uint64_t beside = 0, id = 0;
  ASSERT_EQ(scheduler.submit(greedy(prompt(20, 52), 40), stream, beside), Scheduler::Admission::kAccepted);
  GenerationRequest request = greedy(scored, 2);
  request.prompt_logprobs = true;
  ASSERT_EQ(scheduler.submit(std::move(request), stream, id), Scheduler::Admission::kAccepted);
  std::vector<float> logprobs;
  const auto deadline = Clock::now() + 60s;  // a prompt that never fits its rows would wait forever
  for (int finished = 0; finished < 2;) {
    ASSERT_LT(Clock::now(), deadline) << "the scored prompt was never scheduled";
    std::vector<StreamEvent> events;
    stream->wait(events, 1000ms);
    for (const StreamEvent& e : events) {
      for (const Logprobs& lp : e.prompt_logprobs) logprobs.push_back(lp.chosen.logprob);
      if (e.finish) ++finished;
    }
  }
  EXPECT_LE(engine.logit_rows_held(), rows);

  Engine whole_engine(*model_, EngineOptions{.max_logit_rows = 512});
  SequenceState state = whole_engine.new_sequence(512);
  BatchItem whole{&state, scored, LogitsWanted::kAll};
  whole_engine.step({&whole, 1});
  const auto vocab = static_cast<size_t>(model_->config().vocab_size);
  ASSERT_EQ(logprobs.size(), scored.size() - 1);
  for (size_t k = 0; k + 1 < scored.size(); ++k) {
    const Logprobs expected = compute_logprobs(whole.logits.subspan(k * vocab, vocab), scored[k + 1], 0);
    EXPECT_NEAR(logprobs[k], expected.chosen.logprob, 1e-3) << "prompt token " << k + 1;
  }
}

TEST_F(SchedulerTest, EngineWithTooFewLogitRowsIsRefused) {
  SchedulerOptions options;
  options.parallel = 4;
  Engine engine(*model_, EngineOptions{.max_logit_rows = options.parallel + options.align - 1});
  EXPECT_THROW(Scheduler(engine, *tokenizer_, options), Error);
}

TEST_F(SchedulerTest, CancelFreesTheSequenceAndTheQueueIsBounded) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 1;
  options.context = 512;
  options.max_waiting = 1;
  options.max_batch_tokens = 128;
  Scheduler scheduler(engine, *tokenizer_, options);
  auto stream = std::make_shared<RequestStream>();
  uint64_t running = 0, queued = 0, refused = 0;
  ASSERT_EQ(scheduler.submit(greedy(prompt(20, 7), 400), stream, running), Scheduler::Admission::kAccepted);
  // Wait until the first is running, so the second is the one waiting.
  std::vector<StreamEvent> events;
  while (events.empty()) stream->wait(events, 1000ms);
  ASSERT_EQ(scheduler.submit(greedy(prompt(20, 8), 400), stream, queued), Scheduler::Admission::kAccepted);
  EXPECT_EQ(scheduler.submit(greedy(prompt(20, 9), 4), stream, refused), Scheduler::Admission::kQueueFull);
  EXPECT_TRUE(scheduler.cancel(queued));
  EXPECT_TRUE(scheduler.cancel(running));
  const auto outcomes = collect(*stream, 2);
  EXPECT_EQ(outcomes.at(running).finish, FinishReason::kCancelled);
  EXPECT_EQ(outcomes.at(queued).finish, FinishReason::kCancelled);
  EXPECT_LT(outcomes.at(running).tokens.size() + events.size(), 400u);
  EXPECT_FALSE(scheduler.cancel(running));
  const Outcome after = run_alone(scheduler, greedy(prompt(20, 7), 3));
  EXPECT_EQ(after.finish, FinishReason::kLength);
  EXPECT_EQ(after.tokens.size(), 3u);
  EXPECT_EQ(scheduler.stats().running, 0);
}

TEST_F(SchedulerTest, RefusesPromptsThatCanNeverRun) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 1;
  options.context = 64;
  Scheduler scheduler(engine, *tokenizer_, options);
  auto stream = std::make_shared<RequestStream>();
  uint64_t id = 0;
  EXPECT_THROW(scheduler.submit(greedy({}, 4), stream, id), Error);
  EXPECT_THROW(scheduler.submit(greedy(prompt(65, 1), 4), stream, id), Error);
  EXPECT_THROW(scheduler.submit(greedy({5000}, 4), stream, id), Error);
}

TEST_F(SchedulerTest, ThinkingBudgetForcesTheThinkBlockClosed) {
  Engine engine(*model_);
  SchedulerOptions options;
  options.parallel = 1;
  options.context = 256;
  Scheduler scheduler(engine, *tokenizer_, options);
  GenerationRequest request = greedy(prompt(10, 11), 10);
  request.thinking_open = true;
  request.thinking_budget = 3;
  request.think_end_token = 7;
  request.think_close = {9, 7};
  const Outcome outcome = run_alone(scheduler, request);
  ASSERT_EQ(outcome.tokens.size(), 10u);
  // Budget 3: up to three sampled tokens, then the two forced ones (unless token 7 came by itself).
  const auto closed = std::find(outcome.tokens.begin(), outcome.tokens.end(), 7);
  ASSERT_NE(closed, outcome.tokens.end());
  EXPECT_LE(closed - outcome.tokens.begin(), 4);
}

}  // namespace
}  // namespace tern::runtime
