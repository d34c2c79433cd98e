#include "runtime/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/available_memory.h"
#include "core/error.h"
#include "kernels/ops.h"
#include "kernels/ref/argmax.h"
#include "model/forward.h"
#include "tests/model/tiny_model.h"

namespace tern::runtime {
namespace {

using model::Model;
using model::Pq2Form;
using model::Ptq1Form;

// These tests pin the fp32 oracle's behaviour; the cpu backend is compared with it in cpu_backend_test.
constexpr EngineOptions kOracle{.backend = Backend::kRef};

std::vector<int32_t> random_prompt(const Model& m, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(m.config().vocab_size - 1));
  std::vector<int32_t> out;
  while (out.size() < n) {
    const int32_t t = id(rng);
    if (m.accepts_token(t)) out.push_back(t);
  }
  return out;
}

// The step is refused as over the engine's capacity.
void expect_capacity_error(Engine& engine, BatchItem& item) {
  try {
    engine.step({&item, 1});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity) << e.what();
  }
}

// Logits for every position, fed one token per step.
std::vector<float> walk(Engine& engine, const std::vector<int32_t>& tokens,
                        KvPrecision kv = KvPrecision::kF16) {
  SequenceState seq = engine.new_sequence(static_cast<int64_t>(tokens.size()), kv);
  std::vector<float> all;
  for (size_t i = 0; i < tokens.size(); ++i) {
    BatchItem item{&seq, std::span(tokens).subspan(i, 1), LogitsWanted::kLast};
    engine.step({&item, 1});
    all.insert(all.end(), item.logits.begin(), item.logits.end());
  }
  return all;
}

class EngineTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = Model::open(testing_support::tiny_pq2_model()).release(); }
  static void TearDownTestSuite() { delete model_; }
  static const Model* model_;
  int64_t vocab() const { return model_->config().vocab_size; }
};
const Model* EngineTest::model_ = nullptr;

TEST_F(EngineTest, ChunkedPrefillAgreesWithTheTokenWalk) {
  Engine engine(*model_,
                EngineOptions{.max_batch_tokens = 160, .max_logit_rows = 160, .backend = Backend::kRef});
  const auto prompt = random_prompt(*model_, 150, 1);  // two full chunks of 64 and a partial one
  SequenceState seq = engine.new_sequence(150);
  BatchItem item{&seq, prompt, LogitsWanted::kAll};
  engine.step({&item, 1});
  ASSERT_EQ(item.logits.size(), prompt.size() * vocab());
  const std::vector<float> chunked(item.logits.begin(), item.logits.end());
  const std::vector<float> walked = walk(engine, prompt);
  double worst = 0, max_logit = 0;
  for (size_t i = 0; i < chunked.size(); ++i) {
    worst = std::max(worst, double(std::abs(chunked[i] - walked[i])));
    max_logit = std::max(max_logit, double(std::abs(walked[i])));
  }
  std::printf("chunked prefill vs walk: worst |dlogit| %.3g (max |logit| %.3g)\n", worst, max_logit);
  for (size_t p = 0; p < prompt.size(); ++p) {
    EXPECT_EQ(kernels::ref::argmax(&chunked[p * vocab()], vocab()),
              kernels::ref::argmax(&walked[p * vocab()], vocab()))
        << "position " << p;
  }
  EXPECT_LE(worst, 1e-4 * max_logit);
  EXPECT_EQ(seq.position(), 150);
}

TEST_F(EngineTest, BatchGivesExactlyWhatEachGivesAlone) {
  Engine engine(*model_, kOracle);
  const auto a = random_prompt(*model_, 70, 2);
  const auto b = random_prompt(*model_, 1, 3);
  const auto c = random_prompt(*model_, 9, 4);
  // Alone.
  std::vector<std::vector<float>> alone;
  for (const auto* tokens : {&a, &b, &c}) {
    SequenceState seq = engine.new_sequence(80);
    BatchItem item{&seq, *tokens, LogitsWanted::kAll};
    engine.step({&item, 1});
    alone.emplace_back(item.logits.begin(), item.logits.end());
  }
  // Together, in another order.
  SequenceState sa = engine.new_sequence(80), sb = engine.new_sequence(80), sc = engine.new_sequence(80);
  std::vector<BatchItem> batch{
      {&sc, c, LogitsWanted::kAll}, {&sa, a, LogitsWanted::kAll}, {&sb, b, LogitsWanted::kAll}};
  engine.step(batch);
  EXPECT_EQ(std::vector<float>(batch[1].logits.begin(), batch[1].logits.end()), alone[0]);
  EXPECT_EQ(std::vector<float>(batch[2].logits.begin(), batch[2].logits.end()), alone[1]);
  EXPECT_EQ(std::vector<float>(batch[0].logits.begin(), batch[0].logits.end()), alone[2]);
}

TEST_F(EngineTest, DecodeRowsAndPrefillChunksShareAStep) {
  Engine engine(*model_, kOracle);
  const auto prompt = random_prompt(*model_, 12, 5);
  const auto other = random_prompt(*model_, 20, 6);
  const std::vector<float> walked = walk(engine, prompt);
  SequenceState s1 = engine.new_sequence(32), s2 = engine.new_sequence(32);
  std::vector<BatchItem> batch;
  for (size_t i = 0; i < prompt.size(); ++i) {  // s1 decodes token by token while s2 prefills chunks
    batch = {{&s1, std::span(prompt).subspan(i, 1), LogitsWanted::kLast}};
    if (i < 4) batch.push_back({&s2, std::span(other).subspan(5 * i, 5), LogitsWanted::kNone});
    engine.step(batch);
    EXPECT_EQ(std::vector<float>(batch[0].logits.begin(), batch[0].logits.end()),
              std::vector<float>(walked.begin() + i * vocab(), walked.begin() + (i + 1) * vocab()));
    if (batch.size() > 1) {
      EXPECT_TRUE(batch[1].logits.empty());
    }
  }
  EXPECT_EQ(s2.position(), 20);
}

// BatchItem::want_argmax: the engine's pick is ref::argmax of the item's last logit row, on both backends,
// for decode and prompt items in one step; items that do not ask get -1 and their logits as before.
TEST_F(EngineTest, HeadPickIsTheArgmaxOfTheLastLogitRow) {
  const auto a = random_prompt(*model_, 9, 21);
  const auto b = random_prompt(*model_, 6, 22);
  const auto c = random_prompt(*model_, 3, 23);
  for (const Backend backend : {Backend::kRef, Backend::kCpu}) {
    Engine engine(*model_, EngineOptions{.backend = backend, .threads = backend == Backend::kCpu ? 2 : 1});
    SequenceState sa = engine.new_sequence(16), sb = engine.new_sequence(16), sc = engine.new_sequence(16);
    std::vector<BatchItem> warm{{&sa, std::span(a).first(8), LogitsWanted::kNone}};
    engine.step(warm);
    std::vector<BatchItem> batch{{&sa, std::span(a).last(1), LogitsWanted::kLast, true, true},
                                 {&sb, b, LogitsWanted::kAll, false, true},
                                 {&sc, c, LogitsWanted::kLast}};
    engine.step(batch);
    const auto last_row_argmax = [&](const BatchItem& item) {
      return static_cast<int32_t>(kernels::ref::argmax(
          item.logits.data() + item.logits.size() - static_cast<size_t>(vocab()), vocab()));
    };
    EXPECT_EQ(batch[0].argmax, last_row_argmax(batch[0])) << backend_name(backend);
    EXPECT_EQ(batch[1].argmax, last_row_argmax(batch[1])) << backend_name(backend);
    EXPECT_EQ(batch[1].logits.size(), b.size() * static_cast<size_t>(vocab()));
    EXPECT_EQ(batch[2].argmax, -1);
    EXPECT_EQ(batch[2].logits.size(), static_cast<size_t>(vocab()));
  }
}

// Logits of a 40-token prompt, then of three decode steps (the two roles take different kernels).
std::vector<std::vector<float>> prompt_then_decode(Engine& engine, const std::vector<int32_t>& prompt) {
  SequenceState seq = engine.new_sequence(44);
  std::vector<std::vector<float>> out;
  BatchItem item{&seq, prompt, LogitsWanted::kAll};
  engine.step({&item, 1});
  out.emplace_back(item.logits.begin(), item.logits.end());
  for (int32_t token : {prompt[3], prompt[9], prompt[27]}) {
    const int32_t one[] = {token};
    BatchItem step{&seq, one, LogitsWanted::kLast, true};
    engine.step({&step, 1});
    out.emplace_back(step.logits.begin(), step.logits.end());
  }
  return out;
}

TEST_F(EngineTest, Pq2AndPtq1GiveBitIdenticalLogitsInEveryPtq1Form) {
  Engine pq2(*model_);
  const auto prompt = random_prompt(*model_, 40, 7);
  const auto expected = prompt_then_decode(pq2, prompt);
  for (const auto& [form, type] : {std::pair{Ptq1Form::kTritPanels, quant::TensorType::kTritPanels},
                                   std::pair{Ptq1Form::kTritPlanes, quant::TensorType::kTritPlanes},
                                   std::pair{Ptq1Form::kTritRows, quant::TensorType::kTritRows},
                                   std::pair{Ptq1Form::kPq2_0, quant::TensorType::kPQ2_0}}) {
    const auto ptq1 = Model::open(testing_support::tiny_ptq1_model(), {.ptq1_form = form});
    ASSERT_EQ(ptq1->file().find_tensor("output.weight")->type, quant::TensorType::kPTQ1_0);
    EXPECT_EQ(ptq1->weights().output.type, type);
    Engine engine(*ptq1);
    EXPECT_EQ(prompt_then_decode(engine, prompt), expected) << "ptq1 form " << static_cast<int>(form);
  }
}

// Panels are the rows re-ordered: on either backend a model placed in panels gives the rows form's logits,
// bit for bit, for a prompt and for decode steps, and so does the mapped file (which keeps rows).
TEST_F(EngineTest, Pq2PanelsGiveBitIdenticalLogitsOnBothBackends) {
  const auto open = [](Pq2Form form, model::WeightPlacement placement) {
    return Model::open(testing_support::tiny_pq2_model(), {.placement = placement, .pq2_form = form});
  };
  const auto rows = open(Pq2Form::kRows, model::WeightPlacement::kHugePages);
  const auto panels = open(Pq2Form::kPanels, model::WeightPlacement::kHugePages);
  const auto mapped = open(Pq2Form::kPanels, model::WeightPlacement::kMapped);
  ASSERT_EQ(panels->weights().output.type, quant::TensorType::kPq2Panels);
  ASSERT_EQ(panels->weights().layers[0].ffn_down.type, quant::TensorType::kPq2Panels);
  ASSERT_EQ(mapped->weights().output.type, quant::TensorType::kPQ2_0);
  const auto prompt = random_prompt(*rows, 40, 21);
  for (const Backend backend : {Backend::kRef, Backend::kCpu}) {
    SCOPED_TRACE(backend_name(backend));
    Engine on_rows(*rows, {.backend = backend}), on_panels(*panels, {.backend = backend}),
        on_mapped(*mapped, {.backend = backend});
    const auto expected = prompt_then_decode(on_rows, prompt);
    EXPECT_EQ(prompt_then_decode(on_panels, prompt), expected);
    EXPECT_EQ(prompt_then_decode(on_mapped, prompt), expected);
  }
}

TEST_F(EngineTest, DenseUnfoldedFileMatchesTheFoldedOne) {
  const auto dense = Model::open(testing_support::tiny_dense_model());
  Engine folded(*model_, kOracle), unfolded(*dense, kOracle);
  const auto prompt = random_prompt(*model_, 30, 8);
  const auto a = walk(folded, prompt, KvPrecision::kF32);
  const auto b = walk(unfolded, prompt, KvPrecision::kF32);
  double worst = 0, max_logit = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, double(std::abs(a[i] - b[i])));
    max_logit = std::max(max_logit, double(std::abs(a[i])));
  }
  std::printf("folded ternary vs dense unfolded: worst |dlogit| %.3g (max |logit| %.3g)\n", worst, max_logit);
  EXPECT_LE(worst, 1e-4 * max_logit);
  for (size_t p = 0; p < prompt.size(); ++p) {
    EXPECT_EQ(kernels::ref::argmax(&a[p * vocab()], vocab()), kernels::ref::argmax(&b[p * vocab()], vocab()));
  }
}

// The head's scratch grows to the most logit rows a step has asked for, never to max_logit_rows ahead.
TEST_F(EngineTest, LogitScratchGrowsToTheRowsAsked) {
  Engine engine(*model_, EngineOptions{.max_batch_tokens = 64, .backend = Backend::kCpu, .threads = 1});
  EXPECT_EQ(engine.logit_rows_held(), 0);
  const auto prompt = random_prompt(*model_, 12, 12);
  SequenceState seq = engine.new_sequence(16);
  BatchItem none{&seq, std::span(prompt).first(3), LogitsWanted::kNone};
  engine.step({&none, 1});
  EXPECT_EQ(engine.logit_rows_held(), 0);
  BatchItem last{&seq, std::span(prompt).subspan(3, 3), LogitsWanted::kLast};
  engine.step({&last, 1});
  EXPECT_EQ(engine.logit_rows_held(), 1);
  BatchItem all{&seq, std::span(prompt).subspan(6, 5), LogitsWanted::kAll};
  engine.step({&all, 1});
  EXPECT_EQ(engine.logit_rows_held(), 5);
  ASSERT_EQ(all.logits.size(), 5 * static_cast<size_t>(vocab()));
  BatchItem again{&seq, std::span(prompt).subspan(11, 1), LogitsWanted::kLast};
  engine.step({&again, 1});
  EXPECT_EQ(engine.logit_rows_held(), 5);
}

// By default a step holds at most kDefaultLogitRows rows (a row is a whole vocabulary); a batch asking
// for more is a capacity error that touches no state.
TEST_F(EngineTest, DefaultLogitRowsBoundAStep) {
  const Engine small(*model_, EngineOptions{.max_batch_tokens = 64, .backend = Backend::kRef});
  EXPECT_EQ(small.limits().max_logit_rows, 64);
  Engine engine(*model_, kOracle);
  ASSERT_GT(engine.limits().max_tokens, kDefaultLogitRows);
  EXPECT_EQ(engine.limits().max_logit_rows, kDefaultLogitRows);
  const auto prompt = random_prompt(*model_, kDefaultLogitRows + 1, 14);
  SequenceState seq = engine.new_sequence(kDefaultLogitRows + 1);
  BatchItem all{&seq, prompt, LogitsWanted::kAll};
  expect_capacity_error(engine, all);
  EXPECT_EQ(seq.position(), 0);
  EXPECT_EQ(engine.logit_rows_held(), 0);
}

// bytes_at_most, which the engine checks against the memory available, is what a scratch holds once its
// head has grown to the most logit rows: every buffer counted, from a list independent of forward.cpp's.
TEST_F(EngineTest, ScratchBytesAtMostAreWhatTheScratchHoldsAtItsLargest) {
  const model::ForwardLimits limits{.max_tokens = 48, .max_logit_rows = 7, .gdn_chunk = 16};
  const kernels::Ops& ops = kernels::reference_ops();
  model::Scratch s(model_->config(), limits, ops);
  s.reserve_logit_rows(limits.max_logit_rows);
  size_t floats = 0;
  for (const auto* buffer :
       {&s.x,     &s.u,     &s.rotated,  &s.block,    &s.qg,     &s.q,      &s.gate,  &s.k,     &s.v,
        &s.o,     &s.mixed, &s.conv,     &s.gdn_q,    &s.gdn_k,  &s.gdn_v,  &s.z,     &s.alpha, &s.beta,
        &s.gdn_o, &s.y,     &s.permuted, &s.ffn_gate, &s.ffn_up, &s.hidden, &s.logits}) {
    EXPECT_GT(buffer->size(), 0u);  // every buffer made: one left out of both counts would still agree
    floats += buffer->size();
  }
  const size_t bytes = floats * sizeof(float) + (s.rope.size() + s.gdn_chunk.size()) * sizeof(double) +
                       s.picks.size() * sizeof(int32_t);
  EXPECT_EQ(model::Scratch::bytes_at_most(model_->config(), limits, ops), bytes);
}

// A step whose scratch cannot fit is refused before the scratch is zero-filled (which would have ended in
// the OOM killer: `tern serve --batch-tokens 65536` on the 27B asks for 34 GiB), and one past
// kMaxBatchTokens before anything is counted.
TEST_F(EngineTest, AStepPastTheMemoryAvailableIsRefusedBeforeItsScratchIsMade) {
  const EngineOptions huge{.max_batch_tokens = kMaxBatchTokens, .backend = Backend::kRef};
  const model::ForwardLimits limits{.max_tokens = kMaxBatchTokens, .max_logit_rows = kDefaultLogitRows};
  const uint64_t needed = model::Scratch::bytes_at_most(model_->config(), limits, kernels::reference_ops());
  const std::optional<uint64_t> available = available_memory_bytes();
  if (!available || *available >= needed) GTEST_SKIP() << "this machine could hold the scratch";
  try {
    const Engine engine(*model_, huge);
    FAIL() << "a scratch of " << needed << " bytes was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity) << e.what();
    EXPECT_NE(std::string(e.what()).find("engine buffers for steps of 16777216 tokens and 128 logit rows: "),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(
      Engine(*model_, EngineOptions{.max_batch_tokens = kMaxBatchTokens + 1, .backend = Backend::kRef}),
      Error);
}

TEST_F(EngineTest, ContextOverflowIsAnErrorAndLeavesStateUntouched) {
  Engine engine(*model_, kOracle);
  const auto prompt = random_prompt(*model_, 5, 9);
  SequenceState seq = engine.new_sequence(4);
  BatchItem first{&seq, std::span(prompt).first(3), LogitsWanted::kLast};
  engine.step({&first, 1});
  const SequenceState before = seq;
  BatchItem over{&seq, std::span(prompt).subspan(3, 2), LogitsWanted::kLast};
  expect_capacity_error(engine, over);
  EXPECT_EQ(seq.position(), 3);
  EXPECT_TRUE(std::equal(seq.recurrent_state(0).begin(), seq.recurrent_state(0).end(),
                         before.recurrent_state(0).begin()));
  BatchItem last{&seq, std::span(prompt).subspan(3, 1), LogitsWanted::kLast};
  engine.step({&last, 1});
  EXPECT_EQ(seq.position(), 4);
}

TEST_F(EngineTest, BadTokensAndBatchesAreInputErrors) {
  Engine engine(*model_, EngineOptions{.max_batch_tokens = 8, .backend = Backend::kRef});
  SequenceState seq = engine.new_sequence(16);
  auto expect_error = [&](std::vector<BatchItem> batch, ErrorKind kind) {
    try {
      engine.step(batch);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
    }
    EXPECT_EQ(seq.position(), 0);
  };
  const std::vector<int32_t> too_big{static_cast<int32_t>(vocab())};
  const std::vector<int32_t> negative{-1};
  std::vector<int32_t> unused;
  for (int32_t id = static_cast<int32_t>(vocab()) - 1; id >= 0 && unused.empty(); --id) {
    if (!model_->accepts_token(id)) unused.push_back(id);
  }
  ASSERT_FALSE(unused.empty()) << "the tiny vocabulary has [PAD] rows typed UNUSED";
  const auto ok = random_prompt(*model_, 9, 10);
  expect_error({{&seq, too_big, LogitsWanted::kLast}}, ErrorKind::kInput);
  expect_error({{&seq, negative, LogitsWanted::kLast}}, ErrorKind::kInput);
  expect_error({{&seq, unused, LogitsWanted::kLast}}, ErrorKind::kInput);
  expect_error({{&seq, {}, LogitsWanted::kLast}}, ErrorKind::kInput);
  expect_error({{&seq, std::span(ok).first(1), LogitsWanted::kLast},
                {&seq, std::span(ok).first(1), LogitsWanted::kLast}},
               ErrorKind::kInput);
  expect_error({{&seq, ok, LogitsWanted::kLast}}, ErrorKind::kCapacity);  // 9 > max_batch_tokens
  SequenceState other = engine.new_sequence(16);
  expect_error({{&other, std::span(ok).first(2), LogitsWanted::kNone},
                {&seq, std::span(ok).first(1), LogitsWanted::kLast, true}},
               ErrorKind::kInput);  // a decode item after a prompt item
  EXPECT_EQ(other.position(), 0);
}

// The read-only matmuls are a cpu-backend instrument: asked of the oracle they are an error; on the cpu
// backend the logits change (the ternary matmuls write zeros) but stay finite, so a bench can run on.
TEST_F(EngineTest, ReadOnlyMatmulsNeedTheCpuBackendAndComputeNothing) {
  try {
    Engine engine(*model_, EngineOptions{.backend = Backend::kRef, .read_only_matmuls = true});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
  }
  Engine real(*model_, EngineOptions{.threads = 2});
  Engine read_only(*model_, EngineOptions{.threads = 2, .read_only_matmuls = true});
  const auto prompt = random_prompt(*model_, 8, 5);
  const std::vector<float> logits = walk(read_only, prompt);
  EXPECT_NE(walk(real, prompt), logits);
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
}

// The oracle computes on one thread: a pool size or pinning asked of it is an error, not ignored.
TEST_F(EngineTest, TheRefBackendTakesOneThreadAndNoPinning) {
  for (const EngineOptions& options :
       {EngineOptions{.backend = Backend::kRef, .threads = 4},
        EngineOptions{.backend = Backend::kRef, .pin_threads = true}, EngineOptions{.threads = -1}}) {
    try {
      Engine engine(*model_, options);
      FAIL() << "expected an error for threads " << options.threads;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    }
  }
  EXPECT_EQ(Engine(*model_, EngineOptions{.backend = Backend::kRef, .threads = 1}).threads(), 1);
  EXPECT_EQ(Engine(*model_, EngineOptions{.backend = Backend::kRef}).threads(), 1);
}

TEST_F(EngineTest, TinyModelDecodeRate) {
  Engine engine(*model_, kOracle);
  const auto prompt = random_prompt(*model_, 64, 11);
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  walk(engine, prompt);
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Reported, not asserted (no timing assertions); CPU time is the figure on a shared machine.
  std::printf("tiny model, ref kernels, one thread: %.0f tok/s decode (wall), %.0f tok/s (CPU time)\n",
              64 / wall, 64 / cpu);
}

}  // namespace
}  // namespace tern::runtime
