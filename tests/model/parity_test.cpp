// The oracle against HF transformers in fp32 (model-spec §8.4): every fixture directory under
// tests/fixtures/parity/ (made by tools/reference/, see its README) holds model.gguf, tokens.json,
// logits.npy ([positions][vocab] fp32, teacher-forced) and greedy.json (32 greedy tokens after the
// prompt). Prefill runs chunked (GDN chunked form), the continuation one token at a time (recurrent).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "kernels/ref/argmax.h"
#include "model/model.h"
#include "runtime/engine.h"

namespace tern::model {
namespace {

namespace fs = std::filesystem;

fs::path parity_root() {
  return fs::path(TERN_SOURCE_DIR) / "tests" / "fixtures" / "parity";
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// A little-endian fp32, C-order, 2-D .npy array.
std::vector<float> read_npy_f32(const fs::path& path, int64_t* rows, int64_t* cols) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10u);
  EXPECT_EQ(std::memcmp(bytes.data(), "\x93NUMPY", 6), 0) << path;
  const int major = bytes[6];
  const size_t len_bytes = major == 1 ? 2 : 4;
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i)
    header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  const size_t data_start = 8 + len_bytes + header_len;
  const std::string header(bytes.data() + 8 + len_bytes, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(header, m, std::regex(R"('shape': \((\d+), (\d+)\))"))) << header;
  *rows = std::stoll(m[1]);
  *cols = std::stoll(m[2]);
  std::vector<float> data(static_cast<size_t>(*rows * *cols));
  EXPECT_EQ(bytes.size(), data_start + data.size() * sizeof(float)) << path;
  std::memcpy(data.data(), bytes.data() + data_start, data.size() * sizeof(float));
  return data;
}

std::vector<fs::path> fixture_dirs() {
  std::vector<fs::path> dirs;
  if (!fs::is_directory(parity_root())) return dirs;
  for (const auto& entry : fs::directory_iterator(parity_root())) {
    if (fs::exists(entry.path() / "model.gguf") && fs::exists(entry.path() / "logits.npy"))
      dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

TEST(Parity, MatchesTransformersFp32) {
  const std::vector<fs::path> dirs = fixture_dirs();
  if (dirs.empty()) GTEST_SKIP() << "no fixtures under " << parity_root();
  for (const fs::path& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    const auto model = Model::open((dir / "model.gguf").string());
    const std::vector<int32_t> tokens = read_json(dir / "tokens.json")["tokens"].get<std::vector<int32_t>>();
    std::vector<int32_t> greedy = read_json(dir / "greedy.json")["greedy"].get<std::vector<int32_t>>();
    int64_t positions = 0, vocab = 0;
    const std::vector<float> expected = read_npy_f32(dir / "logits.npy", &positions, &vocab);
    ASSERT_EQ(positions, static_cast<int64_t>(tokens.size()));
    ASSERT_EQ(vocab, model->config().vocab_size);

    const int64_t n = positions;
    runtime::Engine engine(
        *model, runtime::EngineOptions{
                    .max_batch_tokens = n, .max_logit_rows = n, .backend = runtime::Backend::kRef});
    // fp32 KV: the oracle is HF in fp32; fp16 storage alone would cost ≈ 5e-4 relative.
    runtime::SequenceState seq =
        engine.new_sequence(n + static_cast<int64_t>(greedy.size()), runtime::KvPrecision::kF32);
    runtime::BatchItem prefill{&seq, tokens, runtime::LogitsWanted::kAll};
    engine.step({&prefill, 1});

    double worst = 0, max_logit = 0;
    int argmax_misses = 0;
    for (int64_t p = 0; p < n; ++p) {
      const float* got = prefill.logits.data() + p * vocab;
      const float* want = &expected[static_cast<size_t>(p * vocab)];
      for (int64_t v = 0; v < vocab; ++v) {
        worst = std::max(worst, double(std::abs(got[v] - want[v])));
        max_logit = std::max(max_logit, double(std::abs(want[v])));
      }
      argmax_misses += kernels::ref::argmax(got, vocab) != kernels::ref::argmax(want, vocab);
    }
    std::printf("parity %s: %lld positions, worst |dlogit| %.3g, relative %.3g, argmax misses %d\n",
                dir.filename().c_str(), static_cast<long long>(n), worst, worst / max_logit, argmax_misses);
    EXPECT_LE(worst, 1e-4 * max_logit);
    EXPECT_EQ(argmax_misses, 0);

    // Greedy continuation, one token per step, padding rows (typed UNUSED) masked as the fixture's
    // greedy.json masks them (model-spec §7.3).
    auto masked_argmax = [&](const float* row) {
      int32_t best = -1;
      for (int64_t v = 0; v < vocab; ++v) {
        if (!model->accepts_token(v)) continue;
        if (best < 0 || row[v] > row[best]) best = static_cast<int32_t>(v);
      }
      return best;
    };
    std::vector<int32_t> generated;
    int32_t next = masked_argmax(prefill.logits.data() + (n - 1) * vocab);
    for (size_t i = 0; i < greedy.size(); ++i) {
      generated.push_back(next);
      if (i + 1 == greedy.size()) break;
      runtime::BatchItem step{&seq, {&generated.back(), 1}, runtime::LogitsWanted::kLast, true};
      engine.step({&step, 1});
      next = masked_argmax(step.logits.data());
    }
    std::printf("parity %s: greedy continuation compared over %zu of %zu tokens\n", dir.filename().c_str(),
                generated.size(), greedy.size());
    EXPECT_EQ(generated, greedy);
  }
}

// The same fixtures through the cpu backend (two-digit int8 activations). The fast path's bar: the
// argmax identical at >= 99.5% of positions, and a miss only where the reference's own top-2 margin is
// below 1e-3.
TEST(Parity, CpuBackendAgreement) {
  const std::vector<fs::path> dirs = fixture_dirs();
  if (dirs.empty()) GTEST_SKIP() << "no fixtures under " << parity_root();
  for (const fs::path& dir : dirs) {
    SCOPED_TRACE(dir.filename().string());
    const auto model = Model::open((dir / "model.gguf").string());
    const std::vector<int32_t> tokens = read_json(dir / "tokens.json")["tokens"].get<std::vector<int32_t>>();
    int64_t positions = 0, vocab = 0;
    const std::vector<float> expected = read_npy_f32(dir / "logits.npy", &positions, &vocab);
    ASSERT_EQ(positions, static_cast<int64_t>(tokens.size()));
    runtime::Engine engine(*model, runtime::EngineOptions{.max_batch_tokens = positions,
                                                          .max_logit_rows = positions,
                                                          .backend = runtime::Backend::kCpu,
                                                          .threads = 2});
    // Prompt tokens (one prefill step) and decode tokens (one step each, teacher-forced) take different
    // kernels (kernels/cpu/pq2_matmul.h); both are held to the bar.
    runtime::SequenceState prompt_seq = engine.new_sequence(positions, runtime::KvPrecision::kF32);
    runtime::BatchItem prefill{&prompt_seq, tokens, runtime::LogitsWanted::kAll};
    engine.step({&prefill, 1});
    std::vector<float> prompt_logits(prefill.logits.begin(), prefill.logits.end());
    runtime::SequenceState decode_seq = engine.new_sequence(positions, runtime::KvPrecision::kF32);
    std::vector<float> decode_logits;
    for (int64_t p = 0; p < positions; ++p) {
      runtime::BatchItem step{&decode_seq, std::span(tokens).subspan(static_cast<size_t>(p), 1),
                              runtime::LogitsWanted::kLast, true};
      engine.step({&step, 1});
      decode_logits.insert(decode_logits.end(), step.logits.begin(), step.logits.end());
    }
    for (const auto& [role, logits] :
         {std::pair{"prompt", &prompt_logits}, std::pair{"decode", &decode_logits}}) {
      double worst = 0, max_logit = 0;
      int64_t agree = 0, misses_with_clear_margin = 0;
      for (int64_t p = 0; p < positions; ++p) {
        const float* got = logits->data() + p * vocab;
        const float* want = &expected[static_cast<size_t>(p * vocab)];
        for (int64_t v = 0; v < vocab; ++v) {
          worst = std::max(worst, double(std::abs(got[v] - want[v])));
          max_logit = std::max(max_logit, double(std::abs(want[v])));
        }
        const int64_t best = kernels::ref::argmax(want, vocab);
        if (kernels::ref::argmax(got, vocab) == best) {
          ++agree;
          continue;
        }
        float second = -INFINITY;
        for (int64_t v = 0; v < vocab; ++v)
          if (v != best) second = std::max(second, want[v]);
        misses_with_clear_margin += want[best] - second >= 1e-3f;
      }
      std::printf(
          "parity %s (cpu backend, %s tokens): argmax agreement %.2f%% (%lld of %lld), worst |dlogit| %.3g, "
          "relative %.3g\n",
          dir.filename().c_str(), role, 100.0 * double(agree) / double(positions),
          static_cast<long long>(agree), static_cast<long long>(positions), worst, worst / max_logit);
      EXPECT_GE(double(agree), 0.995 * double(positions)) << role;
      EXPECT_EQ(misses_with_clear_margin, 0) << role;
    }
  }
}

}  // namespace
}  // namespace tern::model
