// kernels/cpu trit rows kernels (trit_rows.h) against the PQ2_0 kernels on the same trits: equal bit for
// bit, for every row tail (blocks mod 5), token count, row range and thread split.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/trit_rows.h"
#include "quant/codec.h"
#include "tests/support/random_acts.h"

namespace tern::kernels::cpu {
namespace {

struct TwoForms {
  std::vector<uint8_t> pq2_bytes, trit_bytes;
  TernaryMatrix pq2, trits;
};

// Random trits (0..2, skewed) and scales, as PQ2_0 and as trit rows.
TwoForms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.005f, 0.05f);
  TwoForms m;
  const size_t pq2_row = static_cast<size_t>(cols / 128) * quant::kPq2Bytes;
  const size_t trit_row = *quant::row_bytes(quant::TensorType::kTritRows, cols);
  m.pq2_bytes.resize(pq2_row * rows);
  m.trit_bytes.resize(trit_row * rows);
  uint8_t codes[128];
  for (size_t at = 0; at < m.pq2_bytes.size(); at += quant::kPq2Bytes) {
    for (auto& c : codes) c = static_cast<uint8_t>(rng() % 7 < 3 ? 2 : rng() % 2);
    quant::pq2_pack(codes, fp32_to_fp16((rng() % 2 ? 1.0f : -1.0f) * scale(rng)), m.pq2_bytes.data() + at);
  }
  for (int64_t r = 0; r < rows; ++r) {
    quant::transcode_row(quant::TensorType::kPQ2_0, quant::TensorType::kTritRows, &m.pq2_bytes[r * pq2_row],
                         &m.trit_bytes[r * trit_row], cols, "test");
  }
  m.pq2 = TernaryMatrix{m.pq2_bytes.data(), rows, cols, pq2_row};
  m.trits = TernaryMatrix{m.trit_bytes.data(), rows, cols, trit_row, quant::TensorType::kTritRows};
  return m;
}

std::vector<float> random_acts(int64_t n, uint32_t seed) {
  return testing_support::random_acts(n, seed, 61, 8.0f);
}

std::vector<float> run(Pq2RowsKernel kernel, const TernaryMatrix& w, const QuantizedActs& a, int64_t split) {
  std::vector<float> y(static_cast<size_t>(a.n_tokens * w.rows), -1.0f);
  kernel(y.data(), w.rows, w, a, 0, split);
  kernel(y.data(), w.rows, w, a, split, w.rows);
  return y;
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << what;
}

#if defined(__x86_64__)
class CpuTritRows : public testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_features().has_avx2_fma()) GTEST_SKIP() << "no AVX2 + FMA + F16C here";
  }
};

// Against the scalar kernel (pq2_rows_avx2's bits, the lane order) and the AVX2 one.
TEST_F(CpuTritRows, DecodeKernelEqualsThePq2Kernels) {
  for (int64_t blocks : {1, 2, 3, 4, 5, 6, 7, 8, 9, 40, 48}) {
    const int64_t rows = 23, cols = 128 * blocks;
    const TwoForms m = random_matrix(rows, cols, static_cast<uint32_t>(blocks));
    for (int64_t tokens : {1, 2, 5, 9}) {
      const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(100 + tokens));
      ActBuffer buffer;
      const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
      SCOPED_TRACE(testing::Message() << blocks << " blocks, " << tokens << " tokens");
      const std::vector<float> y = run(trit_rows_avx2, m.trits, a, 9);
      expect_same_bits(y, run(pq2_rows_avx2, m.pq2, a, 4), "avx2");
      expect_same_bits(y, run(pq2_rows_scalar, m.pq2, a, 0), "scalar");
    }
  }
}

TEST_F(CpuTritRows, Avx2RePackGivesThePq2Bytes) {
  for (int64_t blocks : {1, 3, 4, 5, 7, 136}) {
    const TwoForms m = random_matrix(5, 128 * blocks, static_cast<uint32_t>(blocks));
    std::vector<uint8_t> out(m.pq2_bytes.size() - m.pq2.row_bytes);
    trit_rows_to_pq2_avx2(m.trits, 1, 5, out.data());
    EXPECT_EQ(0, std::memcmp(out.data(), m.pq2_bytes.data() + m.pq2.row_bytes, out.size())) << blocks;
  }
}

TEST_F(CpuTritRows, SharedMatmulOverThePoolEqualsPq2) {
  ThreadPool pool(2);
  const int64_t cols = 128 * 43;
  const TwoForms q = random_matrix(300, cols, 1), k = random_matrix(64, cols, 2);
  const std::vector<float> x = random_acts(cols, 3);
  ActBuffer buffer;
  const QuantizedActs a = buffer.quantize(x.data(), cols, 1);
  std::vector<float> yq(300), yk(64), eq(300), ek(64);
  const TernaryTarget trits[] = {{yq.data(), q.trits}, {yk.data(), k.trits}};
  const TernaryTarget pq2[] = {{eq.data(), q.pq2}, {ek.data(), k.pq2}};
  pq2_matmul_shared(trits, a, &pool, trit_rows_avx2);
  pq2_matmul_shared(pq2, a, &pool, pq2_rows_avx2);
  expect_same_bits(yq, eq, "q");
  expect_same_bits(yk, ek, "k");
}
#endif

// Through the slab re-pack (1030 rows: two slabs), on this CPU's prompt kernel for each chunk size.
TEST(CpuTritRowsAnyCpu, PromptKernelEqualsThePq2PromptKernel) {
  const int64_t rows = 1030, cols = 256;
  const TwoForms m = random_matrix(rows, cols, 77);
  for (int64_t tokens : {3, 20}) {
    const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(tokens));
    ActBuffer buffer;
    const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
    expect_same_bits(run(trit_rows_prompt, m.trits, a, 17), run(pq2_prompt_kernel(tokens), m.pq2, a, 0),
                     "prompt");
  }
}

// Any CPU (a form forced without AVX2): the re-pack through the PQ2_0 decode kernel, exact.
TEST(CpuTritRowsAnyCpu, RePackedDecodeEqualsThePq2DecodeKernel) {
  const int64_t cols = 128 * 7;
  const TwoForms m = random_matrix(41, cols, 8);
  std::vector<uint8_t> out(m.pq2_bytes.size());
  trit_rows_to_pq2(m.trits, 0, 41, out.data());
  EXPECT_EQ(out, m.pq2_bytes);
  for (int64_t tokens : {1, 3}) {
    const std::vector<float> x = random_acts(tokens * cols, 5);
    ActBuffer buffer;
    const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
    expect_same_bits(run(trit_rows_repacked, m.trits, a, 13), run(pq2_decode_kernel(), m.pq2, a, 0),
                     "re-packed");
  }
  Pq2RowsKernel decode = trit_rows_repacked;
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) decode = trit_rows_avx2;
#endif
  EXPECT_EQ(trit_rows_decode_kernel(), decode);
}

}  // namespace
}  // namespace tern::kernels::cpu
