// kernels/cpu trit planes kernels (trit_planes.h) against the PQ2_0 kernels on the same trits: equal bit
// for bit, for every row tail (blocks mod 5), token count, row range and thread split.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/trit_planes.h"
#include "quant/codec.h"
#include "tests/support/random_acts.h"

namespace tern::kernels::cpu {
namespace {

struct TwoForms {
  std::vector<uint8_t> pq2_bytes, plane_bytes;
  TernaryMatrix pq2, planes;
};

// Random trits (0..2, skewed) and scales, as PQ2_0 and as trit planes.
TwoForms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.005f, 0.05f);
  TwoForms m;
  const size_t pq2_row = static_cast<size_t>(cols / 128) * quant::kPq2Bytes;
  const size_t plane_row = *quant::row_bytes(quant::TensorType::kTritPlanes, cols);
  m.pq2_bytes.resize(pq2_row * rows);
  m.plane_bytes.resize(plane_row * rows);
  uint8_t codes[128];
  for (size_t at = 0; at < m.pq2_bytes.size(); at += quant::kPq2Bytes) {
    for (auto& c : codes) c = static_cast<uint8_t>(rng() % 7 < 3 ? 2 : rng() % 2);
    quant::pq2_pack(codes, fp32_to_fp16((rng() % 2 ? 1.0f : -1.0f) * scale(rng)), m.pq2_bytes.data() + at);
  }
  for (int64_t r = 0; r < rows; ++r) {
    quant::transcode_row(quant::TensorType::kPQ2_0, quant::TensorType::kTritPlanes, &m.pq2_bytes[r * pq2_row],
                         &m.plane_bytes[r * plane_row], cols, "test");
  }
  m.pq2 = TernaryMatrix{m.pq2_bytes.data(), rows, cols, pq2_row};
  m.planes = TernaryMatrix{m.plane_bytes.data(), rows, cols, plane_row, quant::TensorType::kTritPlanes};
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
class CpuTritPlanes : public testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_features().has_avx512_vbmi()) GTEST_SKIP() << "no AVX-512 VBMI + VNNI here";
  }
};

TEST_F(CpuTritPlanes, DecodeKernelEqualsThePq2DecodeKernel) {
  for (int64_t blocks : {1, 2, 3, 4, 5, 6, 8, 40, 48}) {
    const int64_t rows = 23, cols = 128 * blocks;
    const TwoForms m = random_matrix(rows, cols, static_cast<uint32_t>(blocks));
    for (int64_t tokens : {1, 2, 5}) {
      const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(100 + tokens));
      ActBuffer buffer;
      const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
      SCOPED_TRACE(testing::Message() << blocks << " blocks, " << tokens << " tokens");
      expect_same_bits(run(trit_planes_rows_pairs, m.planes, a, 9), run(pq2_rows_avx512_pairs, m.pq2, a, 4),
                       "pairs");
    }
  }
}

TEST_F(CpuTritPlanes, VbmiRePackGivesThePq2Bytes) {
  for (int64_t blocks : {1, 3, 7, 136}) {
    const TwoForms m = random_matrix(5, 128 * blocks, static_cast<uint32_t>(blocks));
    std::vector<uint8_t> out(m.pq2_bytes.size() - m.pq2.row_bytes);
    trit_planes_to_pq2_vbmi(m.planes, 1, 5, out.data());
    EXPECT_EQ(0, std::memcmp(out.data(), m.pq2_bytes.data() + m.pq2.row_bytes, out.size())) << blocks;
  }
}

// Through the slab re-pack (1030 rows: two slabs) for a chunk on each prompt kernel (AMX from 8 tokens).
TEST_F(CpuTritPlanes, PromptKernelEqualsThePq2PromptKernel) {
  const int64_t rows = 1030, cols = 256;
  const TwoForms m = random_matrix(rows, cols, 77);
  for (int64_t tokens : {3, 20}) {
    const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(tokens));
    ActBuffer buffer;
    const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
    expect_same_bits(run(trit_planes_rows_prompt, m.planes, a, 17),
                     run(pq2_prompt_kernel(tokens), m.pq2, a, 0), tokens < kAmxMinTokens ? "amx few" : "amx");
  }
}

TEST_F(CpuTritPlanes, SharedMatmulOverThePoolEqualsPq2) {
  ThreadPool pool(2);
  const int64_t cols = 128 * 43;
  const TwoForms q = random_matrix(300, cols, 1), k = random_matrix(64, cols, 2);
  const std::vector<float> x = random_acts(cols, 3);
  ActBuffer buffer;
  const QuantizedActs a = buffer.quantize(x.data(), cols, 1);
  std::vector<float> yq(300), yk(64), eq(300), ek(64);
  const TernaryTarget planes[] = {{yq.data(), q.planes}, {yk.data(), k.planes}};
  const TernaryTarget pq2[] = {{eq.data(), q.pq2}, {ek.data(), k.pq2}};
  pq2_matmul_shared(planes, a, &pool, trit_planes_rows_pairs);
  pq2_matmul_shared(pq2, a, &pool, pq2_rows_avx512_pairs);
  expect_same_bits(yq, eq, "q");
  expect_same_bits(yk, ek, "k");
}
#endif

// Any CPU (a form forced without VBMI): the re-pack through the PQ2_0 decode kernel, exact.
TEST(CpuTritPlanesAnyCpu, RePackedDecodeEqualsThePq2DecodeKernel) {
  const int64_t cols = 128 * 7;
  const TwoForms m = random_matrix(41, cols, 8);
  std::vector<uint8_t> out(m.pq2_bytes.size());
  trit_planes_to_pq2(m.planes, 0, 41, out.data());
  EXPECT_EQ(out, m.pq2_bytes);
  for (int64_t tokens : {1, 3}) {
    const std::vector<float> x = random_acts(tokens * cols, 5);
    ActBuffer buffer;
    const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
    expect_same_bits(run(trit_planes_rows_repacked, m.planes, a, 13), run(pq2_decode_kernel(), m.pq2, a, 0),
                     "re-packed");
  }
  Pq2RowsKernel decode = trit_planes_rows_repacked;
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) decode = trit_planes_rows_pairs;
#endif
  EXPECT_EQ(trit_planes_decode_kernel(), decode);
}

}  // namespace
}  // namespace tern::kernels::cpu
