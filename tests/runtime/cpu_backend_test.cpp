// The cpu backend (two-digit int8 activations on the ternary matmuls) against the fp32 oracle on the tiny
// model, and the PQ2_0 and PTQ1_0 files of one model through the cpu backend (bit-identical: the PTQ1_0 rows
// are transcoded losslessly to PQ2_0 before the same kernels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/error.h"
#include "kernels/ref/argmax.h"
#include "runtime/engine.h"
#include "tests/model/tiny_model.h"

namespace tern::runtime {
namespace {

using model::Model;

constexpr int64_t kSequence = 200;

std::vector<int32_t> random_tokens(const Model& m, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(m.config().vocab_size - 1));
  std::vector<int32_t> out;
  while (static_cast<int64_t>(out.size()) < n) {
    const int32_t t = id(rng);
    if (m.accepts_token(t)) out.push_back(t);
  }
  return out;
}

// Teacher-forced logits of every position, the prompt in one prefill step.
std::vector<float> teacher_forced(const Model& m, Backend backend, const std::vector<int32_t>& tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  Engine engine(m, EngineOptions{.max_batch_tokens = n,
                                 .max_logit_rows = n,
                                 .backend = backend,
                                 .threads = backend == Backend::kCpu ? 2 : 1});
  SequenceState seq = engine.new_sequence(n);
  BatchItem item{&seq, tokens, LogitsWanted::kAll};
  engine.step({&item, 1});
  return {item.logits.begin(), item.logits.end()};
}

TEST(CpuBackend, AgreesWithTheOracleOnArgmax) {
  const auto model = Model::open(testing_support::tiny_pq2_model());
  const int64_t vocab = model->config().vocab_size;
  const std::vector<int32_t> tokens = random_tokens(*model, kSequence, 7);
  const std::vector<float> ref = teacher_forced(*model, Backend::kRef, tokens);
  const std::vector<float> cpu = teacher_forced(*model, Backend::kCpu, tokens);
  ASSERT_EQ(ref.size(), cpu.size());

  double scale = 0.0, worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, double(std::abs(ref[i])));
    worst = std::max(worst, double(std::abs(cpu[i] - ref[i])));
  }
  int misses = 0, misses_with_clear_margin = 0, misses_beyond_error = 0;
  for (int64_t p = 0; p < kSequence; ++p) {
    const float* r = ref.data() + p * vocab;
    const float* c = cpu.data() + p * vocab;
    const int64_t best = kernels::ref::argmax(r, vocab);
    if (best == kernels::ref::argmax(c, vocab)) continue;
    ++misses;
    float second = -INFINITY;
    for (int64_t v = 0; v < vocab; ++v)
      if (v != best) second = std::max(second, r[v]);
    if (double(r[best] - second) >= 1e-3 * scale) ++misses_with_clear_margin;
    if (double(r[best] - second) > 2.0 * worst) ++misses_beyond_error;
  }
  std::printf(
      "cpu vs ref backend, tiny model, %lld positions: worst |dlogit| %.3g (scale %.3g), argmax "
      "misses %d (%d with a top-2 margin >= 1e-3 scale)\n",
      static_cast<long long>(kSequence), worst, scale, misses, misses_with_clear_margin);
  EXPECT_GT(worst, 0.0);  // the int8 path really ran
  // Two int8 digits hold each activation to ~3e-5 of its group's range, so logits move by ~1e-4 of the
  // scale (measured 7e-5); the argmax may flip only where the oracle's top-2 margin is within twice that
  // error. A flip beyond it would be a wrong result, not rounding.
  EXPECT_LT(worst, 5e-4 * scale);
  EXPECT_LE(double(misses), 0.005 * double(kSequence));
  EXPECT_EQ(misses_beyond_error, 0);
  EXPECT_EQ(misses_with_clear_margin, 0);
}

TEST(CpuBackend, Pq2AndPtq1FilesGiveBitIdenticalLogits) {
  const auto pq2 = Model::open(testing_support::tiny_pq2_model());
  const auto ptq1 = Model::open(testing_support::tiny_ptq1_model());
  const std::vector<int32_t> tokens = random_tokens(*pq2, 48, 11);
  EXPECT_EQ(teacher_forced(*pq2, Backend::kCpu, tokens), teacher_forced(*ptq1, Backend::kCpu, tokens));
}

// Decode tokens may take another kernel than prompt tokens (kernels/cpu/pq2_matmul.h); a decode step's
// logits must still not depend on what shares its step, and must track the prompt path's.
TEST(CpuBackend, DecodeStepsAreExactInAnyBatchAndTrackThePrompt) {
  const auto model = Model::open(testing_support::tiny_pq2_model());
  const int64_t vocab = model->config().vocab_size;
  const std::vector<int32_t> tokens = random_tokens(*model, 24, 13);
  const std::vector<int32_t> other = random_tokens(*model, 24, 14);
  const std::vector<int32_t> prompt = random_tokens(*model, 96, 15);
  Engine engine(*model, EngineOptions{.max_batch_tokens = 64, .backend = Backend::kCpu, .threads = 2});
  const auto decode_walk = [&](bool crowded) {
    SequenceState seq = engine.new_sequence(24), neighbour = engine.new_sequence(24),
                  prefilling = engine.new_sequence(96);
    std::vector<float> logits;
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::vector<BatchItem> batch{{&seq, std::span(tokens).subspan(i, 1), LogitsWanted::kLast, true}};
      if (crowded) {
        batch.push_back({&neighbour, std::span(other).subspan(i, 1), LogitsWanted::kLast, true});
        batch.push_back({&prefilling, std::span(prompt).subspan(4 * i, 4), LogitsWanted::kLast});
      }
      engine.step(batch);
      logits.insert(logits.end(), batch[0].logits.begin(), batch[0].logits.end());
    }
    return logits;
  };
  const std::vector<float> alone = decode_walk(false);
  EXPECT_EQ(alone, decode_walk(true));

  const std::vector<float> prefilled = teacher_forced(*model, Backend::kCpu, tokens);
  ASSERT_EQ(alone.size(), prefilled.size());
  double scale = 0.0, worst = 0.0;
  for (size_t i = 0; i < alone.size(); ++i) {
    scale = std::max(scale, double(std::abs(prefilled[i])));
    worst = std::max(worst, double(std::abs(alone[i] - prefilled[i])));
  }
  EXPECT_LT(worst, 5e-4 * scale);  // the two kernels differ by rounding only
  for (size_t p = 0; p < tokens.size(); ++p) {
    EXPECT_EQ(kernels::ref::argmax(&alone[p * vocab], vocab),
              kernels::ref::argmax(&prefilled[p * vocab], vocab))
        << "position " << p;
  }
}

TEST(CpuBackend, BackendNamesParse) {
  EXPECT_EQ(parse_backend("ref"), Backend::kRef);
  EXPECT_EQ(parse_backend("cpu"), Backend::kCpu);
  EXPECT_STREQ(backend_name(Backend::kCpu), "cpu");
  EXPECT_THROW(parse_backend("gpu"), Error);
}

}  // namespace
}  // namespace tern::runtime
