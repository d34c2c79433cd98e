// The kernels of PQ2_0 panels (kernels/cpu/pq2_panel_form.h) against the PQ2_0 row kernels of their
// order, bit for bit: the lane-order kernel against pq2_rows_scalar, the group-order one against
// pq2_rows_avx512_groups, the re-pack paths against the kernels they hand rows to, and the matmul over
// the pool against the same matmul on the rows.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "quant/pq2_panels.h"
#include "tests/support/decode_steps.h"
#include "tests/support/random_acts.h"
#include "tests/support/random_pq2.h"

namespace tern::kernels::cpu {
namespace {

// One random PQ2_0 matrix (codes 0..3, scales of both signs) in both forms.
struct BothForms {
  std::vector<uint8_t> rows_bytes, panel_bytes;
  TernaryMatrix rows, panels;
};

BothForms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  BothForms m;
  const size_t row_bytes = static_cast<size_t>(cols / 128) * kPq2BlockBytes;
  m.rows_bytes = testing_support::random_pq2_rows(rows, cols, seed);
  m.panel_bytes.resize(quant::pq2_panels_bytes(rows, cols));
  quant::pack_pq2_panels(m.rows_bytes.data(), row_bytes, rows, cols, m.panel_bytes.data());
  m.rows = TernaryMatrix{m.rows_bytes.data(), rows, cols, row_bytes, quant::TensorType::kPQ2_0};
  m.panels = TernaryMatrix{m.panel_bytes.data(), rows, cols, row_bytes, quant::TensorType::kPq2Panels};
  return m;
}

// Runs `want` on the rows and `got` on the panels over rows [begin, end) of every token; rows outside the
// range must stay untouched (both sides start from the same filler). Tokens from `block_steps_from` on
// are quantised with block steps (act_quant.h).
void expect_equal(Pq2RowsKernel want, Pq2RowsKernel got, int64_t rows, int64_t cols, int64_t tokens,
                  int64_t begin, int64_t end, int64_t block_steps_from = kNoBlockSteps) {
  const BothForms w = random_matrix(rows, cols, static_cast<uint32_t>(tokens * 131 + rows * 7 + cols));
  const std::vector<float> x =
      testing_support::random_acts(tokens * cols, static_cast<uint32_t>(tokens + cols), 61, 8.0f);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens, nullptr, block_steps_from);
  std::vector<float> expected(static_cast<size_t>(rows * tokens), -7.0f), actual(expected);
  want(expected.data(), rows, w.rows, acts, begin, end);
  got(actual.data(), rows, w.panels, acts, begin, end);
  EXPECT_EQ(0, std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)))
      << "rows " << rows << " cols " << cols << " tokens " << tokens << " range " << begin << ".." << end;
}

// Whole ranges, ranges that start or end inside a panel, short last panels, odd block counts.
template <class Check>
void for_each_edge(Check&& check) {
  for (int64_t tokens : {1, 2, 3, 5})
    for (int64_t rows : {1, 7, 15, 16, 17, 24, 40})
      for (int64_t cols : {128, 640, 5120}) {
        check(rows, cols, tokens, 0, rows);
        if (rows > 16) check(rows, cols, tokens, 5, rows - 2);
        if (rows > 16) check(rows, cols, tokens, 16, rows);
      }
}

#if defined(__x86_64__)
// With block steps (decode tokens on this CPU: the block order's own walk) and group steps (handed to
// the group kernel); K = 17408 for the prefetch's end.
TEST(CpuPanelForm, BlockKernelEqualsAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_avx512_vbmi()) GTEST_SKIP() << "no AVX-512 VBMI on this CPU";
  for (const int64_t block_steps_from : {int64_t{0}, kNoBlockSteps}) {
    const auto check = [&](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
      for (const Pq2RowsKernel kernel :
           {pq2_panel_form_rows_blocks_shifts, pq2_panel_form_rows_blocks_affine})
        expect_equal(pq2_rows_avx512_groups, kernel, rows, cols, tokens, begin, end, block_steps_from);
    };
    for_each_edge(check);
    check(40, 17408, 3, 0, 40);
  }
}

// With group steps, and with block steps (the panel kernel's chains then run through a block).
TEST(CpuPanelForm, GroupKernelEqualsAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_avx512_vnni()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  for (const int64_t block_steps_from : {kNoBlockSteps, int64_t{0}}) {
    const auto check = [&](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
      expect_equal(pq2_rows_avx512_groups, pq2_panel_form_rows_groups, rows, cols, tokens, begin, end,
                   block_steps_from);
    };
    for_each_edge(check);
    check(40, 17408, 33, 0, 40);  // 2 token chunks
  }
}

// Prompt sizes from kPanelFormAmxMinTokens on: token tiles short and whole, and two token chunks at
// K = 17408; with block steps (the tiles) and group steps (handed to the group kernels).
TEST(CpuPanelForm, AmxKernelEqualsRowsAmxBitForBit) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU";
  for (const int64_t block_steps_from : {kNoBlockSteps, int64_t{0}}) {
    const auto check = [&](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
      expect_equal(pq2_rows_amx, pq2_panel_form_rows_amx, rows, cols, tokens, begin, end, block_steps_from);
    };
    for (int64_t tokens : {kPanelFormAmxMinTokens, kAmxMinTokens, int64_t{33}})
      for (int64_t rows : {1, 15, 16, 17, 40, 64})
        for (int64_t cols : {128, 640, 5120}) {
          check(rows, cols, tokens, 0, rows);
          if (rows > 16) check(rows, cols, tokens, 5, rows - 2);
          if (rows > 16) check(rows, cols, tokens, 16, rows);
        }
    check(40, 17408, 50, 0, 40);
  }
}

// The few-token kernel on stored panels: one to eight tokens a tile and several tiles, short panels,
// ranges mid-panel (rows before the first whole panel take the rows' kernel); both steps.
TEST(CpuPanelForm, AmxFewKernelEqualsRowsAmxFewBitForBit) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU";
  for (const int64_t block_steps_from : {int64_t{0}, kNoBlockSteps}) {
    const auto check = [&](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
      expect_equal(pq2_rows_amx_few, pq2_panel_form_rows_amx_few, rows, cols, tokens, begin, end,
                   block_steps_from);
    };
    for (int64_t tokens : {1, 2, 5, 8, 9, 17})
      for (int64_t rows : {1, 15, 16, 17, 40})
        for (int64_t cols : {128, 640, 5120}) {
          check(rows, cols, tokens, 0, rows);
          if (rows > 16) check(rows, cols, tokens, 5, rows - 2);
          if (rows > 16) check(rows, cols, tokens, 16, rows);
        }
  }
}
#endif

TEST(CpuPanelForm, RepackedPathsEqualTheRowKernels) {
  for_each_edge([](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
    expect_equal(pq2_decode_kernel(), pq2_panel_form_rows_repacked_decode, rows, cols, tokens, begin, end,
                 testing_support::decode_block_steps_from());
    expect_equal(pq2_prompt_kernel(tokens), pq2_panel_form_rows_repacked_prompt, rows, cols, tokens, begin,
                 end, 0);
  });
}

// Each role's panel kernel gives what that role's row kernel gives: the forms decode the same tokens.
TEST(CpuPanelForm, ChosenKernelsEqualTheRowKernelsOfTheirRole) {
  for (int64_t tokens :
       {int64_t{1}, int64_t{2}, int64_t{8}, kPanelFormAmxMinTokens, kAmxMinTokens, int64_t{40}}) {
    expect_equal(pq2_decode_kernel(), pq2_panel_form_decode_kernel(), 40, 640, tokens, 0, 40,
                 testing_support::decode_block_steps_from());
    expect_equal(pq2_prompt_kernel(tokens), pq2_panel_form_prompt_kernel(tokens), 40, 640, tokens, 0, 40, 0);
  }
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) {
    EXPECT_EQ(pq2_panel_form_decode_kernel(),
              cpu_features().intel ? pq2_panel_form_rows_blocks_affine : pq2_panel_form_rows_blocks_shifts);
  }
  if (cpu_features().has_avx512_vnni() && !cpu_features().has_amx_int8()) {
    EXPECT_EQ(pq2_panel_form_prompt_kernel(512), pq2_panel_form_rows_groups);
  }
  if (cpu_features().has_amx_int8()) {
    EXPECT_EQ(pq2_panel_form_prompt_kernel(kPanelFormAmxMinTokens), pq2_panel_form_rows_amx);
    EXPECT_EQ(pq2_panel_form_prompt_kernel(kPanelFormAmxMinTokens - 1), pq2_panel_form_rows_amx_few);
    EXPECT_EQ(pq2_panel_form_prompt_kernel(1), pq2_panel_form_rows_amx_few);
  }
#endif
}

// The pool splits rows by whole panels; shared passes mix the forms' matrices.
TEST(CpuPanelForm, ThreadedMatmulEqualsTheRowsMatmul) {
  const BothForms a = random_matrix(2003, 1024, 9), b = random_matrix(37, 1024, 10);
  for (int64_t tokens : {1, 3, 9}) {
    const std::vector<float> x = testing_support::random_acts(tokens * 1024, 11, 61, 8.0f);
    ActBuffer buffer;
    const QuantizedActs acts = buffer.quantize(x.data(), 1024, tokens, nullptr,
                                               tokens == 1 ? testing_support::decode_block_steps_from() : 0);
    const Pq2RowsKernel row_kernel = tokens == 1 ? pq2_decode_kernel() : pq2_prompt_kernel(tokens);
    const Pq2RowsKernel panel_kernel =
        tokens == 1 ? pq2_panel_form_decode_kernel() : pq2_panel_form_prompt_kernel(tokens);
    std::vector<float> want_a(static_cast<size_t>(tokens * 2003)), want_b(static_cast<size_t>(tokens * 37));
    const TernaryTarget rows[] = {{want_a.data(), a.rows}, {want_b.data(), b.rows}};
    pq2_matmul_shared(rows, acts, nullptr, row_kernel);
    for (int threads : {2, 3}) {
      ThreadPool pool(threads);
      std::vector<float> got_a(want_a.size(), -1.0f), got_b(want_b.size(), -1.0f);
      const TernaryTarget panels[] = {{got_a.data(), a.panels}, {got_b.data(), b.panels}};
      pq2_matmul_shared(panels, acts, &pool, panel_kernel);
      EXPECT_EQ(want_a, got_a) << "tokens " << tokens << " threads " << threads;
      EXPECT_EQ(want_b, got_b) << "tokens " << tokens << " threads " << threads;
    }
  }
}

// The read-only stand-in reads whole panels and zeroes exactly its rows.
TEST(CpuPanelForm, ReadOnlyKernelZeroesExactlyItsRows) {
  const BothForms w = random_matrix(40, 640, 3);
  const std::vector<float> x = testing_support::random_acts(2 * 640, 4, 61, 8.0f);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), 640, 2);
  std::vector<float> y(2 * 40, 7.0f);
  pq2_rows_read_only(y.data(), 40, w.panels, acts, 9, 31);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t r = 0; r < 40; ++r)
      EXPECT_EQ(y[static_cast<size_t>(t * 40 + r)], r >= 9 && r < 31 ? 0.0f : 7.0f) << t << " " << r;
}

}  // namespace
}  // namespace tern::kernels::cpu
