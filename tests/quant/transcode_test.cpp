// Lossless ternary transcoding (model-spec §3.5): PQ2_0 <-> PTQ1_0, PQ2_0 <-> Q2_0 (pairs of 64-blocks),
// with scale bits copied exactly and unrepresentable data refused.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"

namespace tern::quant {
namespace {

constexpr int64_t kBlocks = 8;
constexpr int64_t kK = kBlocks * 128;

// Scales that must survive bit-for-bit: zero, -0, subnormals, the largest normal, inf and NaN.
constexpr std::array<uint16_t, 9> kSpecialScales{0x0000, 0x8000, 0x0001, 0x03ff, 0x8201,
                                                 0x7bff, 0x7c00, 0x7e01, 0x2a3b};

// A PQ2_0 row of random codes (0..max_code, skewed so the data is not symmetric around 1).
std::vector<uint8_t> random_pq2_row(std::mt19937& rng, uint8_t max_code) {
  std::vector<uint8_t> row(kBlocks * kPq2Bytes);
  for (int64_t b = 0; b < kBlocks; ++b) {
    std::array<uint8_t, 128> codes{};
    for (auto& c : codes) {
      const auto r = rng() % 7;
      c = static_cast<uint8_t>(r < 3 ? 2 : r < 5 ? 0 : 1);
      if (max_code == 3 && rng() % 5 == 0) c = 3;
    }
    const uint16_t d_bits = b < static_cast<int64_t>(kSpecialScales.size()) && rng() % 2 == 0
                                ? kSpecialScales[b]
                                : static_cast<uint16_t>(rng());
    pq2_pack(codes.data(), d_bits, row.data() + b * kPq2Bytes);
  }
  return row;
}

std::vector<uint8_t> transcode(TensorType from, TensorType to, const std::vector<uint8_t>& src, int64_t k) {
  std::vector<uint8_t> dst(*row_bytes(to, k), 0xa5);
  transcode_row(from, to, src.data(), dst.data(), k, "blk.3.ffn_up.weight");
  return dst;
}

std::vector<uint32_t> decoded_bits(TensorType type, const std::vector<uint8_t>& row, int64_t k) {
  std::vector<float> values(static_cast<size_t>(k));
  dequantize_row(type, row.data(), values.data(), k);
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

// Runs f and returns the Error it throws (fails the test if it does not throw).
template <class F>
Error thrown_by(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an Error";
  return Error(ErrorKind::kInternal, "none");
}

TEST(Transcode, Pq2ToPtq1AndBackIsBitExact) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    const std::vector<uint8_t> pq2 = random_pq2_row(rng, 2);
    const std::vector<uint8_t> ptq1 = transcode(TensorType::kPQ2_0, TensorType::kPTQ1_0, pq2, kK);
    ASSERT_EQ(transcode(TensorType::kPTQ1_0, TensorType::kPQ2_0, ptq1, kK), pq2) << "seed " << seed;
    ASSERT_EQ(decoded_bits(TensorType::kPTQ1_0, ptq1, kK), decoded_bits(TensorType::kPQ2_0, pq2, kK))
        << "seed " << seed;
    for (int64_t b = 0; b < kBlocks; ++b) {  // d: FIRST in PQ2_0, LAST in PTQ1_0, same bits
      EXPECT_EQ(ptq1[b * kPtq1Bytes + 26], pq2[b * kPq2Bytes]);
      EXPECT_EQ(ptq1[b * kPtq1Bytes + 27], pq2[b * kPq2Bytes + 1]);
    }
  }
}

TEST(Transcode, Ptq1ToPq2AndBackIsBitExact) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(1000 + seed);
    std::vector<uint8_t> ptq1(kBlocks * kPtq1Bytes);
    for (int64_t b = 0; b < kBlocks; ++b) {
      std::array<uint8_t, 128> trits{};
      for (auto& t : trits) t = static_cast<uint8_t>(rng() % 3);
      ptq1_pack(trits.data(), kSpecialScales[static_cast<size_t>(b + seed) % kSpecialScales.size()],
                ptq1.data() + b * kPtq1Bytes);
    }
    const std::vector<uint8_t> pq2 = transcode(TensorType::kPTQ1_0, TensorType::kPQ2_0, ptq1, kK);
    ASSERT_EQ(transcode(TensorType::kPQ2_0, TensorType::kPTQ1_0, pq2, kK), ptq1) << "seed " << seed;
    const std::vector<uint8_t> q2 = transcode(TensorType::kPTQ1_0, TensorType::kQ2_0, ptq1, kK);
    ASSERT_EQ(transcode(TensorType::kQ2_0, TensorType::kPTQ1_0, q2, kK), ptq1) << "seed " << seed;
  }
}

TEST(Transcode, Pq2ToQ2SplitsBlocksAndBackIsBitExactEvenWithCode3) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(2000 + seed);
    const std::vector<uint8_t> pq2 = random_pq2_row(rng, 3);
    const std::vector<uint8_t> q2 = transcode(TensorType::kPQ2_0, TensorType::kQ2_0, pq2, kK);
    ASSERT_EQ(q2.size(), 2 * kBlocks * kQ2Bytes);
    for (int64_t b = 0; b < kBlocks; ++b) {
      const uint8_t* src = pq2.data() + b * kPq2Bytes;
      for (int64_t half = 0; half < 2; ++half) {
        const uint8_t* dst = q2.data() + (2 * b + half) * kQ2Bytes;
        EXPECT_EQ(dst[0], src[0]);  // same d bits in both halves
        EXPECT_EQ(dst[1], src[1]);
        EXPECT_EQ(std::memcmp(dst + 2, src + 2 + 16 * half, 16), 0) << "block " << b << " half " << half;
      }
    }
    ASSERT_EQ(decoded_bits(TensorType::kQ2_0, q2, kK), decoded_bits(TensorType::kPQ2_0, pq2, kK));
    ASSERT_EQ(transcode(TensorType::kQ2_0, TensorType::kPQ2_0, q2, kK), pq2) << "seed " << seed;
  }
}

TEST(Transcode, SameTypeIsACopy) {
  std::mt19937 rng(5);
  const std::vector<uint8_t> pq2 = random_pq2_row(rng, 3);
  EXPECT_EQ(transcode(TensorType::kPQ2_0, TensorType::kPQ2_0, pq2, kK), pq2);
  const std::vector<uint8_t> q2(kQ2Bytes, 0x9c);
  EXPECT_EQ(transcode(TensorType::kQ2_0, TensorType::kQ2_0, q2, 64), q2);
  const std::vector<uint8_t> bf16{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(transcode(TensorType::kBF16, TensorType::kBF16, bf16, 3), bf16);
}

TEST(Transcode, RefusesCode3IntoPtq1NamingTensorAndBlock) {
  std::mt19937 rng(11);
  std::vector<uint8_t> pq2 = random_pq2_row(rng, 2);
  pq2[5 * kPq2Bytes + 2 + 10] |= 0b11000000;  // block 5, element 43 -> code 3
  const Error e = thrown_by([&] { transcode(TensorType::kPQ2_0, TensorType::kPTQ1_0, pq2, kK); });
  EXPECT_EQ(e.kind(), ErrorKind::kFormat);
  const std::string message = e.what();
  EXPECT_NE(message.find("blk.3.ffn_up.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("block 5"), std::string::npos) << message;
  EXPECT_NE(message.find("element 43"), std::string::npos) << message;

  // The same code 3 reached through Q2_0 names the 64-block it sits in.
  const std::vector<uint8_t> q2 = transcode(TensorType::kPQ2_0, TensorType::kQ2_0, pq2, kK);
  const Error from_q2 = thrown_by([&] { transcode(TensorType::kQ2_0, TensorType::kPTQ1_0, q2, kK); });
  EXPECT_EQ(from_q2.kind(), ErrorKind::kFormat);
  EXPECT_NE(std::string(from_q2.what()).find("q2_0 block 10 "), std::string::npos) << from_q2.what();
}

TEST(Transcode, RefusesQ2HalvesWithDifferentScales) {
  std::mt19937 rng(12);
  std::vector<uint8_t> q2 = transcode(TensorType::kPQ2_0, TensorType::kQ2_0, random_pq2_row(rng, 2), kK);
  q2[3 * kQ2Bytes] ^= 0x01;  // 64-block 3 (second half of 128-block 1) gets another scale
  for (TensorType to : {TensorType::kPQ2_0, TensorType::kPTQ1_0}) {
    const Error e = thrown_by([&] { transcode(TensorType::kQ2_0, to, q2, kK); });
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_NE(std::string(e.what()).find("blocks 2 and 3"), std::string::npos) << e.what();
  }
  // -0 and +0 are different bits: not silently merged either.
  std::vector<uint8_t> zeros(2 * kQ2Bytes, 0x55);
  zeros[0] = 0x00;
  zeros[1] = 0x00;
  zeros[kQ2Bytes] = 0x00;
  zeros[kQ2Bytes + 1] = 0x80;
  EXPECT_THROW(transcode(TensorType::kQ2_0, TensorType::kPQ2_0, zeros, 128), Error);
}

TEST(Transcode, RefusesMalformedRows) {
  std::vector<uint8_t> src(4096), dst(4096);
  for (int64_t k : {int64_t{64}, int64_t{100}, int64_t{-128}}) {
    const Error e = thrown_by(
        [&] { transcode_row(TensorType::kPQ2_0, TensorType::kQ2_0, src.data(), dst.data(), k, "t"); });
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << k;
    EXPECT_THROW(transcode_row(TensorType::kPTQ1_0, TensorType::kPTQ1_0, src.data(), dst.data(), k, "t"),
                 Error)
        << k;
  }
  const Error e = thrown_by(
      [&] { transcode_row(TensorType::kPQ2_0, TensorType::kF16, src.data(), dst.data(), 128, "t"); });
  EXPECT_EQ(e.kind(), ErrorKind::kInput);
}

}  // namespace
}  // namespace tern::quant
