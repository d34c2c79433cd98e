// cpu_ops: PQ2_0 matmuls go to the int8 kernels, dense ones to the fp32 kernels; both close to the oracle.
#include "kernels/cpu/cpu_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/ref/argmax.h"
#include "quant/codec.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"
#include "quant/types.h"

namespace tern::kernels {
namespace {

// A random dense matrix, its PQ2_0 quantisation, and `tokens` random activation rows.
struct Problem {
  std::vector<float> dense, x;
  std::vector<uint8_t> pq2;
  size_t row_bytes;

  Problem(int64_t rows, int64_t cols, int64_t tokens, uint32_t seed)
      : dense(rows * cols),
        x(tokens * cols),
        pq2(cols / 128 * quant::kPq2Bytes * rows),
        row_bytes(cols / 128 * quant::kPq2Bytes) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    for (auto& v : dense) v = normal(rng) * 0.02f;
    for (auto& v : x) v = normal(rng);
    for (int64_t r = 0; r < rows; ++r)
      quant::quantize_row(quant::TensorType::kPQ2_0, dense.data() + r * cols, pq2.data() + r * row_bytes,
                          cols);
  }
};

TEST(CpuOps, Pq2AndDenseMatmulsTrackTheOracle) {
  constexpr int64_t kRows = 21, kCols = 512, kTokens = 3;
  Problem problem(kRows, kCols, kTokens, 5);
  const std::vector<float>& dense = problem.dense;
  const std::vector<float>& x = problem.x;

  ThreadPool pool(2);
  const Ops& cpu = cpu_ops(pool);
  EXPECT_STREQ(cpu.name, "cpu");
  const Ops& ref = reference_ops();

  const MatrixView ternary{quant::TensorType::kPQ2_0, problem.pq2.data(), kCols, kRows, problem.row_bytes};
  std::vector<float> y_cpu(kTokens * kRows), y_ref(kTokens * kRows);
  cpu.matmul(y_cpu.data(), ternary, x.data(), {kTokens});
  ref.matmul(y_ref.data(), ternary, x.data(), {kTokens});
  double rms = 0.0, worst = 0.0;
  for (size_t i = 0; i < y_ref.size(); ++i) {
    rms += static_cast<double>(y_ref[i]) * y_ref[i];
    worst = std::max(worst, std::fabs(static_cast<double>(y_cpu[i]) - y_ref[i]));
  }
  rms = std::sqrt(rms / static_cast<double>(y_ref.size()));
  EXPECT_LT(worst, 1e-4 * rms);  // two-digit int8 activations: ~fp16 precision
  EXPECT_GT(worst, 0.0);         // and it really is the int8 path, not the oracle

  const MatrixView f32{quant::TensorType::kF32, reinterpret_cast<const uint8_t*>(dense.data()), kCols, kRows,
                       kCols * sizeof(float)};
  cpu.matmul(y_cpu.data(), f32, x.data(), {kTokens});
  ref.matmul(y_ref.data(), f32, x.data(), {kTokens});
  for (size_t i = 0; i < y_ref.size(); ++i) EXPECT_NEAR(y_cpu[i], y_ref[i], 1e-5 * rms) << i;
}

// Problem's PQ2_0 matrix in each form the weights may be placed in (model::Model): rows, PQ2_0 panels
// and trit panels.
struct PlacedForms {
  std::vector<uint8_t> pq2_panels, trit_panels;
  std::vector<MatrixView> views;

  PlacedForms(const Problem& problem, int64_t rows, int64_t cols)
      : pq2_panels(quant::pq2_panels_bytes(rows, cols)), trit_panels(quant::trit_panels_bytes(rows, cols)) {
    quant::pack_pq2_panels(problem.pq2.data(), problem.row_bytes, rows, cols, pq2_panels.data());
    quant::pack_trit_panels(problem.pq2.data(), problem.row_bytes, rows, cols, trit_panels.data());
    views = {MatrixView{quant::TensorType::kPQ2_0, problem.pq2.data(), cols, rows, problem.row_bytes},
             MatrixView{quant::TensorType::kPq2Panels, pq2_panels.data(), cols, rows,
                        *quant::row_bytes(quant::TensorType::kPq2Panels, cols)},
             MatrixView{quant::TensorType::kTritPanels, trit_panels.data(), cols, rows,
                        *quant::row_bytes(quant::TensorType::kTritPanels, cols)}};
  }
};

// Decode and prompt rows may take different kernels (kernels/cpu/pq2_matmul.h), or one pass of the prompt
// kernel together (pq2_decode_takes_prompt_kernel), but a row's result must depend only on its role and
// its own values: alone or in any mixed batch, bit for bit, in every form.
TEST(CpuOps, Pq2RowDependsOnlyOnItsRoleAndItsValues) {
  constexpr int64_t kRows = 40, kCols = 1024, kPrompt = 9;
  ThreadPool pool(2);
  const Ops& cpu = cpu_ops(pool);
  for (const int64_t decode : {int64_t{3}, cpu::kAmxDecodeMinTokens + 1}) {
    const int64_t tokens = decode + kPrompt;
    const Problem problem(kRows, kCols, tokens, 11);
    const std::vector<float>& x = problem.x;
    const PlacedForms forms(problem, kRows, kCols);
    for (const MatrixView& w : forms.views) {
      SCOPED_TRACE(::testing::Message() << quant::traits(w.type).name << ", " << decode << " decode tokens");
      std::vector<float> mixed(tokens * kRows), one(kRows), chunk(kPrompt * kRows);
      cpu.matmul(mixed.data(), w, x.data(), {tokens, decode});
      const auto row_of = [&](const std::vector<float>& y, int64_t t) {
        return std::vector<float>(y.begin() + t * kRows, y.begin() + (t + 1) * kRows);
      };
      for (int64_t t = 0; t < tokens; ++t) {
        const bool decoding = t < decode;
        cpu.matmul(one.data(), w, x.data() + t * kCols, {1, decoding ? 1 : 0});
        EXPECT_EQ(one, row_of(mixed, t)) << (decoding ? "decode" : "prompt") << " token " << t;
      }
      cpu.matmul(chunk.data(), w, x.data() + decode * kCols, {kPrompt, 0});
      for (int64_t t = 0; t < kPrompt; ++t) EXPECT_EQ(row_of(chunk, t), row_of(mixed, decode + t)) << t;
    }
  }
}

// Where decode is in the block order (AVX-512 VBMI), decode tokens are quantised with block steps as prompt
// tokens are and both roles take the group order: a token gives the same bits in either role.
TEST(CpuOps, DecodeTokensGivePromptBitsWhereDecodeIsInBlockOrder) {
  if (!cpu::pq2_decode_in_block_order()) GTEST_SKIP() << "decode is in the lane order on this CPU";
  constexpr int64_t kRows = 40, kCols = 1024, kTokens = 3;
  const Problem problem(kRows, kCols, kTokens, 12);
  const MatrixView w{quant::TensorType::kPQ2_0, problem.pq2.data(), kCols, kRows, problem.row_bytes};
  ThreadPool pool(2);
  const Ops& cpu = cpu_ops(pool);
  std::vector<float> decoded(kTokens * kRows), prompted(kTokens * kRows);
  cpu.matmul(decoded.data(), w, problem.x.data(), {kTokens, kTokens});
  cpu.matmul(prompted.data(), w, problem.x.data(), {kTokens, 0});
  EXPECT_EQ(decoded, prompted);
}

// The head with its greedy pick fused: the same logits as the matmul, and per token ref::argmax of its
// row, for decode and prompt tokens together, rows split over three threads, and a tie across threads.
TEST(CpuOps, HeadPickIsTheArgmaxOfTheMatmulsRows) {
  constexpr int64_t kRows = 2000, kCols = 1024, kDecode = 3, kPrompt = 6, kTokens = kDecode + kPrompt;
  Problem problem(kRows, kCols, kTokens, 17);
  ThreadPool pool(3);
  const Ops& cpu = cpu_ops(pool);
  const MatrixView w{quant::TensorType::kPQ2_0, problem.pq2.data(), kCols, kRows, problem.row_bytes};
  std::vector<float> plain(kTokens * kRows), fused(kTokens * kRows);
  std::vector<int32_t> best(kTokens, -1);
  cpu.matmul(plain.data(), w, problem.x.data(), {kTokens, kDecode});

  // Row 1 becomes a copy of token 0's winning row, which is far from it: the two tie for every token,
  // and the lower index must win.
  const auto winner = static_cast<int64_t>(ref::argmax(plain.data(), kRows));
  ASSERT_GT(winner, 400);  // past the first thread's first range of rows
  std::copy_n(&problem.pq2[winner * problem.row_bytes], problem.row_bytes, &problem.pq2[problem.row_bytes]);
  cpu.matmul(plain.data(), w, problem.x.data(), {kTokens, kDecode});
  cpu.matmul_argmax(fused.data(), best.data(), w, problem.x.data(), {kTokens, kDecode});
  EXPECT_EQ(fused, plain);
  for (int64_t t = 0; t < kTokens; ++t)
    EXPECT_EQ(best[t], ref::argmax(&plain[t * kRows], kRows)) << "token " << t;
  EXPECT_EQ(best[0], 1);

  // A dense head takes the matmul, then the scan.
  const MatrixView f32{quant::TensorType::kF32, reinterpret_cast<const uint8_t*>(problem.dense.data()), kCols,
                       kRows, kCols * sizeof(float)};
  cpu.matmul(plain.data(), f32, problem.x.data(), {kTokens});
  cpu.matmul_argmax(fused.data(), best.data(), f32, problem.x.data(), {kTokens});
  EXPECT_EQ(fused, plain);
  for (int64_t t = 0; t < kTokens; ++t) EXPECT_EQ(best[t], ref::argmax(&plain[t * kRows], kRows)) << t;
}

// One matmul_shared call of ternary and dense targets, some over activations of their own
// (MatmulTarget::x: the GDN's qkv and z with its decay projections): each target's rows equal its matmul
// alone over its own activations, bit for bit, for decode and prompt tokens together, and for a call of
// dense targets only.
TEST(CpuOps, SharedPassGivesEachTargetItsOwnMatmul) {
  constexpr int64_t kDecode = 2, kPrompt = 5, kTokens = kDecode + kPrompt;
  const Problem over_x(40, 1024, kTokens, 31), own(24, 1024, kTokens, 32), narrow(16, 512, kTokens, 33);
  const Problem dense(21, 1024, kTokens, 34);
  std::vector<uint16_t> bf16(dense.dense.size());
  std::transform(dense.dense.begin(), dense.dense.end(), bf16.begin(), fp32_to_bf16);
  const auto pq2 = [](const Problem& p, int64_t rows, int64_t cols) {
    return MatrixView{quant::TensorType::kPQ2_0, p.pq2.data(), cols, rows, p.row_bytes};
  };
  const MatrixView bf16_view{quant::TensorType::kBF16, reinterpret_cast<const uint8_t*>(bf16.data()), 1024,
                             21, 1024 * sizeof(uint16_t)};
  const MatrixView f32_view{quant::TensorType::kF32, reinterpret_cast<const uint8_t*>(dense.dense.data()),
                            1024, 21, 1024 * sizeof(float)};
  ThreadPool pool(2);
  const Ops& cpu = cpu_ops(pool);
  const TokenRows rows{kTokens, kDecode};

  std::vector<std::vector<float>> y(5);
  const MatmulTarget targets[] = {
      {nullptr, pq2(over_x, 40, 1024)},                  // the call's x
      {nullptr, bf16_view, own.x.data()},                // dense over its own activations
      {nullptr, pq2(own, 24, 1024), own.x.data()},       // ternary over its own
      {nullptr, f32_view},                               // dense over the call's x
      {nullptr, pq2(narrow, 16, 512), narrow.x.data()},  // another width
  };
  std::vector<MatmulTarget> call(std::begin(targets), std::end(targets));
  for (size_t i = 0; i < call.size(); ++i) {
    y[i].assign(static_cast<size_t>(kTokens * call[i].w.rows), -1.0f);
    call[i].y = y[i].data();
  }
  cpu.matmul_shared(call, over_x.x.data(), rows);
  for (size_t i = 0; i < call.size(); ++i) {
    std::vector<float> alone(y[i].size());
    cpu.matmul(alone.data(), call[i].w, call[i].x != nullptr ? call[i].x : over_x.x.data(), rows);
    EXPECT_EQ(alone, y[i]) << "target " << i;
  }

  const MatmulTarget dense_only[] = {{y[1].data(), bf16_view, own.x.data()}, {y[3].data(), f32_view}};
  std::fill(y[1].begin(), y[1].end(), -1.0f);
  std::fill(y[3].begin(), y[3].end(), -1.0f);
  cpu.matmul_shared(std::span(dense_only), over_x.x.data(), rows);
  std::vector<float> alone(y[1].size());
  cpu.matmul(alone.data(), bf16_view, own.x.data(), rows);
  EXPECT_EQ(alone, y[1]);
  cpu.matmul(alone.data(), f32_view, over_x.x.data(), rows);
  EXPECT_EQ(alone, y[3]);
}

}  // namespace
}  // namespace tern::kernels
