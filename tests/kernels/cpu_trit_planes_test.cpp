// kernels/cpu trit planes kernels (trit_planes.h) against the PQ2_0 kernels on the same trits: equal bit
// for bit, for every row tail (blocks mod 5), token count, row range and thread split.
#include <gtest/gtest.h>

#include <vector>

#include "core/cpu_features.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/trit_planes.h"
#include "tests/support/trit_row_forms.h"

namespace tern::kernels::cpu {
namespace {

using testing_support::expect_same_bits;
using testing_support::kernel_test_acts;
using testing_support::run_split;
using testing_support::TwoForms;

#if defined(__x86_64__)
TwoForms random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  return testing_support::random_two_forms(quant::TensorType::kTritPlanes, rows, cols, seed);
}

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
      const std::vector<float> x = kernel_test_acts(tokens * cols, static_cast<uint32_t>(100 + tokens));
      ActBuffer buffer;
      const QuantizedActs a =
          buffer.quantize(x.data(), cols, tokens, nullptr, testing_support::decode_block_steps_from());
      SCOPED_TRACE(testing::Message() << blocks << " blocks, " << tokens << " tokens");
      expect_same_bits(run_split(trit_planes_decode_kernel(), m.form, a, 9),
                       run_split(pq2_decode_kernel(), m.pq2, a, 4), "decode");
    }
  }
}

TEST_F(CpuTritPlanes, VbmiRePackGivesThePq2Bytes) {
  for (int64_t blocks : {1, 3, 7, 136}) {
    const TwoForms m = random_matrix(5, 128 * blocks, static_cast<uint32_t>(blocks));
    std::vector<uint8_t> out(m.pq2_bytes.size() - m.pq2.row_bytes);
    trit_planes_to_pq2_vbmi(m.form, 1, 5, out.data());
    EXPECT_EQ(0, std::memcmp(out.data(), m.pq2_bytes.data() + m.pq2.row_bytes, out.size())) << blocks;
  }
}

// Through the slab re-pack (1030 rows: two slabs) for a chunk on each prompt kernel (AMX from kAmxMinTokens).
TEST_F(CpuTritPlanes, PromptKernelEqualsThePq2PromptKernel) {
  const int64_t rows = 1030, cols = 256;
  const TwoForms m = random_matrix(rows, cols, 77);
  for (int64_t tokens : {3, 20}) {
    const std::vector<float> x = kernel_test_acts(tokens * cols, static_cast<uint32_t>(tokens));
    ActBuffer buffer;
    const QuantizedActs a = buffer.quantize(x.data(), cols, tokens);
    expect_same_bits(run_split(trit_planes_rows_prompt, m.form, a, 17),
                     run_split(pq2_prompt_kernel(tokens), m.pq2, a, 0),
                     tokens < kAmxMinTokens ? "amx few" : "amx");
  }
}

TEST_F(CpuTritPlanes, SharedMatmulOverThePoolEqualsPq2) {
  testing_support::expect_shared_matmul_equals_pq2(quant::TensorType::kTritPlanes,
                                                   trit_planes_decode_kernel(), pq2_decode_kernel());
}
#endif

// Any CPU: the re-pack through the PQ2_0 decode kernel, and the decode kernel this CPU takes, give this CPU's
// PQ2_0 decode bits: a PTQ1_0 file decodes as its PQ2_0 twin.
TEST(CpuTritPlanesAnyCpu, DecodeKernelsGiveThePq2DecodeKernelsBits) {
  testing_support::expect_pq2_decode_bits(quant::TensorType::kTritPlanes, trit_planes_to_pq2,
                                          trit_planes_rows_repacked);
  testing_support::expect_pq2_decode_bits(quant::TensorType::kTritPlanes, trit_planes_to_pq2,
                                          trit_planes_decode_kernel());
}

}  // namespace
}  // namespace tern::kernels::cpu
