// The group-order PQ2_0 kernels: AMX-INT8 against the scalar kernel (the same exact integers per row,
// token and scale group; they differ only by fp32 rounding of the scaled partial sums), and the AMX,
// AVX-512 and AVX-VNNI panel kernels against the AVX-512 VNNI group kernel, which sums and rounds in the
// same group order, so all must agree bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "tests/support/random_acts.h"
#include "tests/support/random_pq2.h"

// x86 only: the AMX and AVX-512 kernels are built for x86-64 alone.
#if defined(__x86_64__)
namespace tern::kernels::cpu {
namespace {

struct RandomMatrix {
  std::vector<uint8_t> bytes;
  TernaryMatrix view;
};

// Random codes 0..3 (3, the +2·d code, included) and scales of both signs.
RandomMatrix random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  RandomMatrix m;
  const size_t row_bytes = static_cast<size_t>(cols / 128) * kPq2BlockBytes;
  m.bytes = testing_support::random_pq2_rows(rows, cols, seed);
  m.view = TernaryMatrix{m.bytes.data(), rows, cols, row_bytes};
  return m;
}

std::vector<float> random_acts(int64_t n, uint32_t seed) {
  return testing_support::random_acts(n, seed, 61, 8.0f);
}

// Runs `kernel` and the scalar one on rows [row_begin, rows) and compares; rows before row_begin must stay
// untouched. Tokens from `block_steps_from` on are quantised with block steps.
void expect_matches_scalar(Pq2RowsKernel kernel, int64_t rows, int64_t cols, int64_t tokens,
                           int64_t row_begin, uint32_t seed, int64_t block_steps_from = kNoBlockSteps) {
  const RandomMatrix w = random_matrix(rows, cols, seed);
  const std::vector<float> x = random_acts(tokens * cols, seed + 1);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens, nullptr, block_steps_from);
  std::vector<float> scalar(static_cast<size_t>(rows * tokens), -7.0f), fast(scalar);
  pq2_rows_scalar(scalar.data(), rows, w.view, acts, row_begin, rows);
  kernel(fast.data(), rows, w.view, acts, row_begin, rows);
  // Both round at most K/32 + K/128 fp32 additions of terms bounded by |code − 1|·|d|·|x|, twice over.
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      const size_t at = static_cast<size_t>(t * rows + r);
      if (r < row_begin) {
        EXPECT_EQ(fast[at], -7.0f) << "row " << r << " outside the range was written";
        continue;
      }
      double magnitude = 0.0;
      const uint8_t* row = w.bytes.data() + static_cast<size_t>(r) * w.view.row_bytes;
      for (int64_t e = 0; e < cols; ++e) {
        const uint8_t* block = row + static_cast<size_t>(e / 128) * kPq2BlockBytes;
        uint16_t d;
        std::memcpy(&d, block, 2);
        const int code = (block[2 + e % 128 / 4] >> (2 * (e % 4))) & 3;
        magnitude +=
            std::fabs(static_cast<double>(code - 1) * fp16_to_fp32(d) * x[static_cast<size_t>(t * cols + e)]);
      }
      const double tolerance = 4.0 * static_cast<double>(cols / 32 + 8) * 6e-8 * magnitude + 1e-30;
      EXPECT_NEAR(fast[at], scalar[at], tolerance)
          << "rows " << rows << " cols " << cols << " tokens " << tokens << " row " << r << " token " << t;
    }
  }
}

// The AMX kernel's own path takes activations with block steps (prompt tokens): every token count up to
// 40 (whole tiles in place, a short last tile copied), then panel, range and K-segment edges.
TEST(CpuPq2Amx, MatchesScalarForEveryTokenCountUpTo40) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  for (int64_t tokens = 1; tokens <= 40; ++tokens)
    expect_matches_scalar(pq2_rows_amx, 24, 384, tokens, 0, static_cast<uint32_t>(tokens), 0);
}

TEST(CpuPq2Amx, MatchesScalarOnPanelAndRangeEdges) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  expect_matches_scalar(pq2_rows_amx, 16, 128, 17, 0, 1, 0);   // one panel, one block
  expect_matches_scalar(pq2_rows_amx, 40, 1280, 33, 8, 2, 0);  // range starting mid-panel, short last panel
  expect_matches_scalar(pq2_rows_amx, 64, 5120, 16, 0, 3, 0);  // 27B width, one full token tile
  expect_matches_scalar(pq2_rows_amx, 9, 17408, 40, 0, 4, 0);  // K in several segments
}

// Compares the AMX kernel with the group kernel on activations quantised with block steps from
// `block_steps_from` on.
void expect_amx_equals_groups(int64_t rows, int64_t cols, int64_t tokens, int64_t begin,
                              int64_t block_steps_from) {
  const RandomMatrix w = random_matrix(rows, cols, static_cast<uint32_t>(tokens * rows + cols));
  const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(tokens + 3 * cols));
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens, nullptr, block_steps_from);
  std::vector<float> vnni(static_cast<size_t>(rows * tokens), -7.0f), amx(vnni);
  pq2_rows_avx512_groups(vnni.data(), rows, w.view, acts, begin, rows);
  pq2_rows_amx(amx.data(), rows, w.view, acts, begin, rows);
  EXPECT_EQ(vnni, amx) << "rows " << rows << " cols " << cols << " tokens " << tokens << " from " << begin
                       << (block_steps_from == 0 ? ", block steps" : "");
}

// With block steps (act_quant.h: one power-of-two step for a block's four groups) the AMX kernel sums a
// block's integers in its tiles (K = 64) and scales them once; the group order's four products then add
// exactly, so it still gives the group kernel's bits: token tiles short, whole and several, row ranges
// mid-panel, short panels, and K cut into segments (17408 with 70 tokens: three).
TEST(CpuPq2Amx, WithBlockStepsEqualsAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  for (int64_t tokens : {1, 2, 5, 16, 17, 33, 40})
    for (int64_t rows : {13, 40})
      for (int64_t cols : {128, 640, 5120})
        expect_amx_equals_groups(rows, cols, tokens, rows > 16 ? 5 : 0, 0);
  expect_amx_equals_groups(20, 17408, 70, 3, 0);
}

// Activations with group steps (decode tokens; the engine sends the kernel none), all or some of a
// view's tokens, are handed to the group kernel: its bits, not a K = 64 sum over steps that differ.
TEST(CpuPq2Amx, WithGroupStepsEqualsAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  for (int64_t tokens : {1, 17, 40})
    for (int64_t rows : {13, 40}) expect_amx_equals_groups(rows, 640, tokens, 0, kNoBlockSteps);
  expect_amx_equals_groups(40, 640, 17, 5, 5);
}

// More tokens than one chunk (256: three chunks here) and K in several segments, with either steps: every
// segment after the first continues its rows' sums from y (the next tile's sums requested on the way).
TEST(CpuPq2Amx, ChunksOfSegmentsEqualAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  for (const int64_t block_steps_from : {kNoBlockSteps, int64_t{0}})
    expect_amx_equals_groups(13, 5120, 530, 2, block_steps_from);
}

// The few-token kernel sums a block's exact integers under block steps (the group order's value, its
// only path) and hands group steps to the group kernel, so it must give the group kernel's bits for any
// token count (one to eight tokens a tile, several tiles), row count and row range (short panels, ranges
// mid-panel).
TEST(CpuPq2AmxFew, EqualsAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  for (const int64_t block_steps_from : {int64_t{0}, kNoBlockSteps}) {
    for (int64_t tokens : {1, 2, 3, 4, 5, 7, 8, 9, 17}) {
      for (int64_t rows : {8, 13, 16, 40}) {
        for (int64_t cols : {128, 640, 5120}) {
          const RandomMatrix w = random_matrix(rows, cols, static_cast<uint32_t>(tokens * rows + cols));
          const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(tokens + cols));
          ActBuffer buffer;
          const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens, nullptr, block_steps_from);
          const int64_t begin = rows > 16 ? 5 : 0;
          std::vector<float> groups(static_cast<size_t>(rows * tokens), -7.0f), amx(groups);
          pq2_rows_avx512_groups(groups.data(), rows, w.view, acts, begin, rows);
          pq2_rows_amx_few(amx.data(), rows, w.view, acts, begin, rows);
          EXPECT_EQ(groups, amx) << "rows " << rows << " cols " << cols << " tokens " << tokens
                                 << (block_steps_from == 0 ? ", block steps" : "");
        }
      }
    }
  }
}

TEST(CpuPq2AmxFew, MatchesScalarWithBlockSteps) {
  if (!cpu_features().has_amx_int8()) GTEST_SKIP() << "no AMX-INT8 on this CPU or OS";
  for (int64_t tokens = 1; tokens <= 9; ++tokens)
    expect_matches_scalar(pq2_rows_amx_few, 24, 384, tokens, 0, static_cast<uint32_t>(tokens), 0);
  expect_matches_scalar(pq2_rows_amx_few, 40, 5120, 6, 8, 3, 0);  // 27B width, range mid-panel
}

// The AVX-512 and AVX-VNNI panel kernels sum the same exact group integers in the same fp32 order as the
// group kernel (with block steps, a block's integers scaled once: the same value), so they must give its
// bits for any token count (whole and partial token tiles, several
// token chunks), row count and row range (short panels of either height, ranges mid-panel), and leave the
// rows outside their range alone.
TEST(CpuPq2Panels, EqualAvx512GroupOrderBitForBit) {
  if (!cpu_features().has_avx512_vnni()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  std::vector<Pq2RowsKernel> kernels{pq2_rows_avx512_panels};
  if (cpu_features().has_avx_vnni()) kernels.push_back(pq2_rows_avxvnni_panels);
  const auto compare = [&](int64_t rows, int64_t cols, int64_t tokens, int64_t begin,
                           int64_t block_steps_from) {
    const RandomMatrix w = random_matrix(rows, cols, static_cast<uint32_t>(tokens * rows + cols));
    const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(tokens + cols));
    ActBuffer buffer;
    const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens, nullptr, block_steps_from);
    std::vector<float> groups(static_cast<size_t>(rows * tokens), -7.0f);
    pq2_rows_avx512_groups(groups.data(), rows, w.view, acts, begin, rows);
    for (Pq2RowsKernel kernel : kernels) {
      std::vector<float> panels(groups.size(), -7.0f);
      kernel(panels.data(), rows, w.view, acts, begin, rows);
      EXPECT_EQ(groups, panels) << "rows " << rows << " cols " << cols << " tokens " << tokens << " from row "
                                << begin << (block_steps_from == 0 ? ", block steps" : "");
    }
  };
  for (const int64_t block_steps_from : {kNoBlockSteps, int64_t{0}}) {  // group steps, then block steps
    for (int64_t tokens : {1, 2, 3, 4, 5, 8, 9, 17})
      for (int64_t rows : {1, 7, 8, 13, 16, 24, 40})
        for (int64_t cols : {128, 640, 5120})
          compare(rows, cols, tokens, rows > 16 ? 5 : 0, block_steps_from);
    compare(20, 17408, 33, 3, block_steps_from);  // more tokens than one activation chunk holds at this width
  }
}

// On a CPU with AVX-VNNI but no AVX-512 there is no group kernel to compare with: the scalar kernel's
// values within rounding, on the same edges.
TEST(CpuPq2Panels, AvxVnniMatchesScalar) {
  if (!cpu_features().has_avx_vnni()) GTEST_SKIP() << "no AVX-VNNI on this CPU";
  expect_matches_scalar(pq2_rows_avxvnni_panels, 8, 128, 1, 0, 1);     // one panel, one block, one token
  expect_matches_scalar(pq2_rows_avxvnni_panels, 40, 1280, 33, 4, 2);  // range mid-panel, short last panel
  expect_matches_scalar(pq2_rows_avxvnni_panels, 21, 5120, 5, 0, 3);  // 27B width, token tiles and a lone one
  expect_matches_scalar(pq2_rows_avxvnni_panels, 9, 17408, 40, 0, 4);  // more tokens than one chunk holds
}

// A prompt token's outputs must not depend on the size of its chunk (prefix reuse, chunks cut by load):
// the prompt kernel for many tokens gives the prompt kernel's bits for one.
TEST(CpuPq2Amx, PromptTokenOutputsDoNotDependOnTheChunk) {
  const RandomMatrix w = random_matrix(72, 1024, 8);
  const std::vector<float> x = random_acts(20 * 1024, 9);
  ActBuffer batch_buffer, one_buffer;
  const QuantizedActs batch = batch_buffer.quantize(x.data(), 1024, 20);
  std::vector<float> batched(20 * 72), alone(72);
  pq2_matmul(batched.data(), w.view, batch, nullptr);
  for (int64_t t : {0, 7, 19}) {
    const QuantizedActs one = one_buffer.quantize(x.data() + t * 1024, 1024, 1);
    pq2_matmul(alone.data(), w.view, one, nullptr);
    EXPECT_EQ(alone, std::vector<float>(batched.begin() + t * 72, batched.begin() + (t + 1) * 72))
        << "token " << t;
  }
}

// A group holding a NaN has scale NaN and digits 0 (act_quant.h; with block steps, its whole block): its
// token's outputs are all NaN, and no other token's.
TEST(CpuPq2GroupOrder, NonFiniteActivationReachesOnlyItsTokenInEveryKernel) {
  std::vector<Pq2RowsKernel> kernels;
  if (cpu_features().has_avx512_vnni()) kernels = {pq2_rows_avx512_groups, pq2_rows_avx512_panels};
  if (cpu_features().has_amx_int8()) kernels.insert(kernels.end(), {pq2_rows_amx, pq2_rows_amx_few});
  if (cpu_features().has_avx_vnni()) kernels.push_back(pq2_rows_avxvnni_panels);
  if (kernels.empty()) GTEST_SKIP() << "no group-order kernel on this CPU";
  const RandomMatrix w = random_matrix(16, 256, 5);
  std::vector<float> x = random_acts(9 * 256, 6);
  x[3 * 256 + 200] = NAN;
  for (const int64_t block_steps_from : {kNoBlockSteps, int64_t{0}}) {
    ActBuffer buffer;
    const QuantizedActs acts = buffer.quantize(x.data(), 256, 9, nullptr, block_steps_from);
    for (Pq2RowsKernel kernel : kernels) {
      std::vector<float> y(9 * 16);
      kernel(y.data(), 16, w.view, acts, 0, 16);
      for (int64_t t = 0; t < 9; ++t)
        for (int64_t r = 0; r < 16; ++r) EXPECT_EQ(std::isnan(y[static_cast<size_t>(t * 16 + r)]), t == 3);
    }
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
#endif
