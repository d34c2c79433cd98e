// The row-wise trit forms (quant/trit_planes.h, trit_rows.h): lossless re-packs from and to the file
// types, code 3 refused, quantize_row as PTQ1_0's.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"

namespace tern::quant {
namespace {

class TritRowForms : public testing::TestWithParam<TensorType> {
 protected:
  TensorType form() const { return GetParam(); }
};

// PTQ1_0 → the form → PTQ1_0 and PQ2_0 → the form → PQ2_0 are the identity, for every row tail
// (blocks mod 5) and any scale bits.
TEST_P(TritRowForms, RePackIsLosslessForEveryTail) {
  std::mt19937 rng(5);
  for (int64_t blocks = 1; blocks <= 11; ++blocks) {
    const int64_t k = 128 * blocks;
    std::vector<uint8_t> pq2(blocks * kPq2Bytes);
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t codes[128];
      for (auto& c : codes) c = static_cast<uint8_t>(rng() % 3);
      pq2_pack(codes, static_cast<uint16_t>(rng()), pq2.data() + b * kPq2Bytes);
    }
    std::vector<uint8_t> ptq1(blocks * kPtq1Bytes), held(*row_bytes(form(), k));
    std::vector<uint8_t> back_pq2(pq2.size()), back_ptq1(ptq1.size());
    transcode_row(TensorType::kPQ2_0, TensorType::kPTQ1_0, pq2.data(), ptq1.data(), k, "t");
    transcode_row(TensorType::kPTQ1_0, form(), ptq1.data(), held.data(), k, "t");
    transcode_row(form(), TensorType::kPTQ1_0, held.data(), back_ptq1.data(), k, "t");
    transcode_row(form(), TensorType::kPQ2_0, held.data(), back_pq2.data(), k, "t");
    EXPECT_EQ(back_ptq1, ptq1) << blocks;
    EXPECT_EQ(back_pq2, pq2) << blocks;
    std::vector<float> a(k), b(k);
    dequantize_row(TensorType::kPQ2_0, pq2.data(), a.data(), k);
    dequantize_row(form(), held.data(), b.data(), k);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), k * sizeof(float))) << blocks;
  }
}

TEST_P(TritRowForms, RefusesCodeThreeNamingTheBlock) {
  uint8_t codes[128] = {};
  codes[17] = 3;
  std::vector<uint8_t> pq2(2 * kPq2Bytes), held(*row_bytes(form(), 256));
  pq2_pack(codes, 0x3c00, pq2.data());
  pq2_pack(codes, 0x3c00, pq2.data() + kPq2Bytes);
  try {
    transcode_row(TensorType::kPQ2_0, form(), pq2.data(), held.data(), 256, "blk.0.ffn_up");
    FAIL() << "code 3 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_NE(std::string(e.what()).find("blk.0.ffn_up: pq2_0 block 0 holds code 3"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(std::string(traits(form()).name)), std::string::npos) << e.what();
  }
}

TEST_P(TritRowForms, QuantizeRowMatchesPtq1) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  const int64_t k = 128 * 6;
  std::vector<float> w(k);
  for (float& v : w) v = normal(rng);
  std::vector<uint8_t> ptq1(6 * kPtq1Bytes), held(*row_bytes(form(), k));
  quantize_row(TensorType::kPTQ1_0, w.data(), ptq1.data(), k);
  quantize_row(form(), w.data(), held.data(), k);
  std::vector<uint8_t> repacked(held.size());
  transcode_row(TensorType::kPTQ1_0, form(), ptq1.data(), repacked.data(), k, "t");
  EXPECT_EQ(held, repacked);
}

INSTANTIATE_TEST_SUITE_P(Forms, TritRowForms, testing::Values(TensorType::kTritPlanes, TensorType::kTritRows),
                         [](const testing::TestParamInfo<TensorType>& param) {
                           return std::string(traits(param.param).name);
                         });

}  // namespace
}  // namespace tern::quant
