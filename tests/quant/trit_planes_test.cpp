// Trit planes (quant/trit_planes.h): the byte code, the layout the VBMI kernels rely on, and the lossless
// re-pack from and to the file types.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"
#include "quant/trit_planes.h"

namespace tern::quant {
namespace {

TEST(TritPlanes, EveryFiveTritPatternHasItsOwnByteAndComesBack) {
  std::set<uint8_t> bytes;
  for (int v = 0; v < 243; ++v) {
    const std::array<uint8_t, 5> slots{static_cast<uint8_t>(v / 81), static_cast<uint8_t>(v / 27 % 3),
                                       static_cast<uint8_t>(v / 9 % 3), static_cast<uint8_t>(v / 3 % 3),
                                       static_cast<uint8_t>(v % 3)};
    const uint8_t byte = trit_plane_byte(slots);
    EXPECT_LT(byte & 63, 63) << v;  // the kernels' 64-entry slot 0 and 1 tables leave entry 63 empty
    EXPECT_EQ(trit_plane_slots(byte), slots) << v;
    bytes.insert(byte);
  }
  EXPECT_EQ(bytes.size(), 243u);
  EXPECT_EQ(trit_plane_byte({}), 0);
  EXPECT_THROW(trit_plane_byte({0, 3, 0, 0, 0}), Error);
}

TEST(TritPlanes, RowSizeIsSourcesThenScales) {
  EXPECT_EQ(trit_plane_sources(128), 1);
  EXPECT_EQ(trit_plane_sources(128 * 3), 2);
  EXPECT_EQ(row_bytes(TensorType::kTritPlanes, 5120), 16 * 64 + 80);    // 1104, PTQ1_0 1120
  EXPECT_EQ(row_bytes(TensorType::kTritPlanes, 17408), 55 * 64 + 272);  // 3792, PTQ1_0 3808
  EXPECT_EQ(row_bytes(TensorType::kTritPlanes, 6144), 20 * 64 + 96);    // 1376, PTQ1_0 1344
  EXPECT_FALSE(row_bytes(TensorType::kTritPlanes, 100));
}

TEST(TritPlanes, IsNeverAFileType) {
  EXPECT_FALSE(type_from_id(static_cast<uint32_t>(TensorType::kTritPlanes)));
  EXPECT_FALSE(type_from_name("trit_planes"));
  EXPECT_TRUE(is_ternary(TensorType::kTritPlanes));
}

// Block b's element e sits in slot v % 5 of source v / 5 at byte p, v = 2b + h, where PQ2_0's unpack
// puts it: h = (e % 4) / 2, p = 32·(e % 2) + e / 4.
TEST(TritPlanes, ElementsSitWhereThePq2CodeVectorsHaveThem) {
  const int64_t blocks = 7, k = 128 * blocks;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int e : {0, 1, 2, 3, 5, 66, 127}) {
      std::vector<uint8_t> trits(k, 1);
      std::vector<uint16_t> scales(blocks, 0x3c00);
      trits[b * 128 + e] = 2;
      std::vector<uint8_t> row(*row_bytes(TensorType::kTritPlanes, k));
      trit_planes_store_row(row.data(), k, trits.data(), scales.data());
      const int64_t vector = 2 * b + (e % 4) / 2;
      const int p = 32 * (e % 2) + e / 4;
      EXPECT_EQ(trit_plane_slots(row[vector / 5 * 64 + p])[vector % 5], 2) << b << "," << e;
      int twos = 0;
      for (int64_t i = 0; i < trit_plane_sources(k) * 64; ++i)
        for (uint8_t t : trit_plane_slots(row[i])) twos += t == 2;
      EXPECT_EQ(twos, 1);
    }
  }
}

// PTQ1_0 → trit planes → PTQ1_0 and PQ2_0 → trit planes → PQ2_0 are the identity, for every row tail
// (blocks mod 5) and any scale bits.
TEST(TritPlanes, RePackIsLosslessForEveryTail) {
  std::mt19937 rng(5);
  for (int64_t blocks = 1; blocks <= 11; ++blocks) {
    const int64_t k = 128 * blocks;
    std::vector<uint8_t> pq2(blocks * kPq2Bytes);
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t codes[128];
      for (auto& c : codes) c = static_cast<uint8_t>(rng() % 3);
      pq2_pack(codes, static_cast<uint16_t>(rng()), pq2.data() + b * kPq2Bytes);
    }
    std::vector<uint8_t> ptq1(blocks * kPtq1Bytes), planes(*row_bytes(TensorType::kTritPlanes, k));
    std::vector<uint8_t> back_pq2(pq2.size()), back_ptq1(ptq1.size());
    transcode_row(TensorType::kPQ2_0, TensorType::kPTQ1_0, pq2.data(), ptq1.data(), k, "t");
    transcode_row(TensorType::kPTQ1_0, TensorType::kTritPlanes, ptq1.data(), planes.data(), k, "t");
    transcode_row(TensorType::kTritPlanes, TensorType::kPTQ1_0, planes.data(), back_ptq1.data(), k, "t");
    transcode_row(TensorType::kTritPlanes, TensorType::kPQ2_0, planes.data(), back_pq2.data(), k, "t");
    EXPECT_EQ(back_ptq1, ptq1) << blocks;
    EXPECT_EQ(back_pq2, pq2) << blocks;
    std::vector<float> a(k), b(k);
    dequantize_row(TensorType::kPQ2_0, pq2.data(), a.data(), k);
    dequantize_row(TensorType::kTritPlanes, planes.data(), b.data(), k);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), k * sizeof(float))) << blocks;
  }
}

TEST(TritPlanes, RefusesCodeThreeNamingTheBlock) {
  uint8_t codes[128] = {};
  codes[17] = 3;
  std::vector<uint8_t> pq2(2 * kPq2Bytes), planes(*row_bytes(TensorType::kTritPlanes, 256));
  pq2_pack(codes, 0x3c00, pq2.data());
  pq2_pack(codes, 0x3c00, pq2.data() + kPq2Bytes);
  try {
    transcode_row(TensorType::kPQ2_0, TensorType::kTritPlanes, pq2.data(), planes.data(), 256,
                  "blk.0.ffn_up");
    FAIL() << "code 3 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFormat);
    EXPECT_NE(std::string(e.what()).find("blk.0.ffn_up: pq2_0 block 0 holds code 3"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("trit_planes"), std::string::npos) << e.what();
  }
}

TEST(TritPlanes, QuantizeRowMatchesPtq1) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  const int64_t k = 128 * 6;
  std::vector<float> w(k);
  for (float& v : w) v = normal(rng);
  std::vector<uint8_t> ptq1(6 * kPtq1Bytes), planes(*row_bytes(TensorType::kTritPlanes, k));
  quantize_row(TensorType::kPTQ1_0, w.data(), ptq1.data(), k);
  quantize_row(TensorType::kTritPlanes, w.data(), planes.data(), k);
  std::vector<uint8_t> repacked(planes.size());
  transcode_row(TensorType::kPTQ1_0, TensorType::kTritPlanes, ptq1.data(), repacked.data(), k, "t");
  EXPECT_EQ(planes, repacked);
}

}  // namespace
}  // namespace tern::quant
