// The kernels of trit panels (kernels/cpu/trit_panels.h) against the PQ2_0 kernels of their order on the
// same codes, bit for bit: the lane-order decode kernel against pq2_rows_scalar, the prompt path against
// the PQ2_0 panel prompt kernel, the re-pack paths against the row kernels they hand rows to, and the
// matmul over the pool against the same matmul on the rows.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "kernels/cpu/trit_panels.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"
#include "tests/support/decode_steps.h"
#include "tests/support/random_acts.h"
#include "tests/support/random_pq2.h"

namespace tern::kernels::cpu {
namespace {

// One random matrix of trits (codes 0..2, scales of both signs) as PQ2_0 rows, PQ2_0 panels and trit panels.
struct Forms {
  std::vector<uint8_t> rows_bytes, pq2_panel_bytes, trit_panel_bytes;
  TernaryMatrix rows, pq2_panels, trit_panels;
};

Forms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  Forms m;
  const size_t row_bytes = static_cast<size_t>(cols / 128) * kPq2BlockBytes;
  m.rows_bytes = testing_support::random_trit_pq2_rows(rows, cols, seed);
  m.pq2_panel_bytes.resize(quant::pq2_panels_bytes(rows, cols));
  quant::pack_pq2_panels(m.rows_bytes.data(), row_bytes, rows, cols, m.pq2_panel_bytes.data());
  m.trit_panel_bytes.resize(quant::trit_panels_bytes(rows, cols));
  quant::pack_trit_panels(m.rows_bytes.data(), row_bytes, rows, cols, m.trit_panel_bytes.data());
  m.rows = TernaryMatrix{m.rows_bytes.data(), rows, cols, row_bytes, quant::TensorType::kPQ2_0};
  m.pq2_panels =
      TernaryMatrix{m.pq2_panel_bytes.data(), rows, cols, row_bytes, quant::TensorType::kPq2Panels};
  m.trit_panels = TernaryMatrix{m.trit_panel_bytes.data(), rows, cols, quant::trit_panels_row_bytes(cols),
                                quant::TensorType::kTritPanels};
  return m;
}

enum class Against { kRows, kPq2Panels };

// Runs `want` on the rows (or the PQ2_0 panels) and `got` on the trit panels over rows [begin, end) of
// every token; rows outside the range must stay untouched (both sides start from the same filler). Tokens
// from `block_steps_from` on are quantised with block steps (act_quant.h).
void expect_equal(Pq2RowsKernel want, Against form, Pq2RowsKernel got, int64_t rows, int64_t cols,
                  int64_t tokens, int64_t begin, int64_t end, int64_t block_steps_from = kNoBlockSteps) {
  const Forms w = random_matrix(rows, cols, static_cast<uint32_t>(tokens * 131 + rows * 7 + cols));
  const std::vector<float> x =
      testing_support::random_acts(tokens * cols, static_cast<uint32_t>(tokens + cols), 61, 8.0f);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens, nullptr, block_steps_from);
  std::vector<float> expected(static_cast<size_t>(rows * tokens), -7.0f), actual(expected);
  want(expected.data(), rows, form == Against::kRows ? w.rows : w.pq2_panels, acts, begin, end);
  got(actual.data(), rows, w.trit_panels, acts, begin, end);
  EXPECT_EQ(0, std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)))
      << "rows " << rows << " cols " << cols << " tokens " << tokens << " range " << begin << ".." << end;
}

// Whole ranges, ranges that start or end inside a panel, short last panels, tail units of 1..4 blocks.
template <class Check>
void for_each_edge(Check&& check) {
  for (int64_t tokens : {1, 2, 3})
    for (int64_t rows : {1, 7, 16, 17, 40})
      for (int64_t cols : {128, 384, 640, 896, 1152, 5120}) {
        check(rows, cols, tokens, 0, rows);
        if (rows > 16) check(rows, cols, tokens, 5, rows - 2);
        if (rows > 16) check(rows, cols, tokens, 16, rows);
      }
}

#if defined(__x86_64__)
// With block steps (decode tokens on this CPU: the block order's own walk) and group steps (handed to the
// prompt path).
TEST(CpuTritPanels, BlockKernelEqualsAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_avx512_vbmi()) GTEST_SKIP() << "no AVX-512 VBMI on this CPU";
  for (const int64_t block_steps_from : {int64_t{0}, kNoBlockSteps}) {
    for_each_edge([&](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
      expect_equal(pq2_rows_avx512_groups, Against::kRows, trit_panels_rows_blocks, rows, cols, tokens, begin,
                   end, block_steps_from);
    });
  }
}

TEST(CpuTritPanels, PromptPathEqualsThePq2PanelPromptKernelBitForBit) {
  if (!cpu_features().has_avx512_vbmi()) GTEST_SKIP() << "no AVX-512 VBMI on this CPU";
  for_each_edge([](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
    expect_equal(pq2_panel_form_prompt_kernel(tokens), Against::kPq2Panels, trit_panels_rows_prompt_vbmi,
                 rows, cols, tokens, begin, end);
  });
  // More panels than one expansion slab holds, and two token chunks.
  expect_equal(pq2_panel_form_prompt_kernel(33), Against::kPq2Panels, trit_panels_rows_prompt_vbmi, 1100, 640,
               33, 3, 1097);
}
#endif

TEST(CpuTritPanels, RepackedPathsEqualTheRowKernels) {
  for_each_edge([](int64_t rows, int64_t cols, int64_t tokens, int64_t begin, int64_t end) {
    expect_equal(pq2_decode_kernel(), Against::kRows, trit_panels_rows_repacked_decode, rows, cols, tokens,
                 begin, end, testing_support::decode_block_steps_from());
    expect_equal(pq2_prompt_kernel(tokens), Against::kRows, trit_panels_rows_repacked_prompt, rows, cols,
                 tokens, begin, end);
  });
}

// Each role's kernel gives what that role's PQ2_0 kernel gives: a PTQ1_0 file decodes its PQ2_0 twin's
// tokens.
TEST(CpuTritPanels, ChosenKernelsEqualThePq2KernelsOfTheirRole) {
  for (int64_t tokens : {1, 2, 9}) {
    expect_equal(pq2_decode_kernel(), Against::kRows, trit_panels_decode_kernel(), 40, 640, tokens, 0, 40,
                 testing_support::decode_block_steps_from());
    expect_equal(pq2_panel_form_prompt_kernel(tokens), Against::kPq2Panels, trit_panels_prompt_kernel(tokens),
                 40, 640, tokens, 0, 40);
  }
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) {
    EXPECT_EQ(trit_panels_decode_kernel(), trit_panels_rows_blocks);
    EXPECT_EQ(trit_panels_prompt_kernel(512), trit_panels_rows_prompt_vbmi);
  }
#endif
}

// The pool splits rows by whole panels, decode and prompt alike.
TEST(CpuTritPanels, ThreadedMatmulEqualsTheRowsMatmul) {
  const Forms w = random_matrix(2003, 1024, 9);
  ThreadPool pool(3);
  for (int64_t tokens : {1, 9}) {
    const std::vector<float> x = testing_support::random_acts(tokens * 1024, 5, 61, 8.0f);
    ActBuffer buffer;
    const QuantizedActs acts = buffer.quantize(x.data(), 1024, tokens, nullptr,
                                               tokens == 1 ? testing_support::decode_block_steps_from() : 0);
    std::vector<float> expected(static_cast<size_t>(2003 * tokens)), actual(expected);
    if (tokens == 1) {
      pq2_matmul(expected.data(), w.rows, acts, &pool, pq2_decode_kernel());
      pq2_matmul(actual.data(), w.trit_panels, acts, &pool, trit_panels_decode_kernel());
    } else {
      pq2_matmul(expected.data(), w.pq2_panels, acts, &pool, pq2_panel_form_prompt_kernel(tokens));
      pq2_matmul(actual.data(), w.trit_panels, acts, &pool, trit_panels_prompt_kernel(tokens));
    }
    EXPECT_EQ(0, std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float))) << tokens;
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
