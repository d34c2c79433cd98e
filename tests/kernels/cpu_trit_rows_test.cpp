// kernels/cpu trit rows kernels (trit_rows.h) against the PQ2_0 kernels on the same trits: equal bit for
// bit, for every row tail (blocks mod 5), token count, row range and thread split.
#include <gtest/gtest.h>

#include <vector>

#include "core/cpu_features.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/trit_rows.h"
#include "tests/support/trit_row_forms.h"

namespace tern::kernels::cpu {
namespace {

using testing_support::expect_same_bits;
using testing_support::kernel_test_acts;
using testing_support::run_split;
using testing_support::TwoForms;

TwoForms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  return testing_support::random_two_forms(quant::TensorType::kTritRows, rows, cols, seed);
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
      const std::vector<float> x = kernel_test_acts(tokens * cols, static_cast<uint32_t>(100 + tokens));
      ActBuffer buffer;
      const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
      SCOPED_TRACE(testing::Message() << blocks << " blocks, " << tokens << " tokens");
      const std::vector<float> y = run_split(trit_rows_avx2, m.form, a, 9);
      expect_same_bits(y, run_split(pq2_rows_avx2, m.pq2, a, 4), "avx2");
      expect_same_bits(y, run_split(pq2_rows_scalar, m.pq2, a, 0), "scalar");
    }
  }
}

TEST_F(CpuTritRows, Avx2RePackGivesThePq2Bytes) {
  for (int64_t blocks : {1, 3, 4, 5, 7, 136}) {
    const TwoForms m = random_matrix(5, 128 * blocks, static_cast<uint32_t>(blocks));
    std::vector<uint8_t> out(m.pq2_bytes.size() - m.pq2.row_bytes);
    trit_rows_to_pq2_avx2(m.form, 1, 5, out.data());
    EXPECT_EQ(0, std::memcmp(out.data(), m.pq2_bytes.data() + m.pq2.row_bytes, out.size())) << blocks;
  }
}

TEST_F(CpuTritRows, SharedMatmulOverThePoolEqualsPq2) {
  testing_support::expect_shared_matmul_equals_pq2(quant::TensorType::kTritRows, trit_rows_avx2,
                                                   pq2_rows_avx2);
}
#endif

// Through the slab re-pack (1030 rows: two slabs), on this CPU's prompt kernel for each chunk size.
TEST(CpuTritRowsAnyCpu, PromptKernelEqualsThePq2PromptKernel) {
  const int64_t rows = 1030, cols = 256;
  const TwoForms m = random_matrix(rows, cols, 77);
  for (int64_t tokens : {3, 20}) {
    const std::vector<float> x = kernel_test_acts(tokens * cols, static_cast<uint32_t>(tokens));
    ActBuffer buffer;
    const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
    expect_same_bits(run_split(trit_rows_prompt, m.form, a, 17),
                     run_split(pq2_prompt_kernel(tokens), m.pq2, a, 0), "prompt");
  }
}

// Any CPU: the re-pack through the PQ2_0 decode kernel, and the decode kernel this CPU takes (the SIMD
// kernel or the re-pack), give this CPU's PQ2_0 decode bits: a PTQ1_0 file decodes as its PQ2_0 twin.
TEST(CpuTritRowsAnyCpu, DecodeKernelsGiveThePq2DecodeKernelsBits) {
  testing_support::expect_pq2_decode_bits(quant::TensorType::kTritRows, trit_rows_to_pq2, trit_rows_repacked);
  testing_support::expect_pq2_decode_bits(quant::TensorType::kTritRows, trit_rows_to_pq2,
                                          trit_rows_decode_kernel());
}

}  // namespace
}  // namespace tern::kernels::cpu
