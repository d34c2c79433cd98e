// Trit rows (quant/trit_rows.h): the byte code (PTQ1_0's with its top bit flipped) and the layout the AVX2
// kernel relies on (the re-packs: trit_row_forms_test.cpp).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"
#include "quant/trit_rows.h"

namespace tern::quant {
namespace {

std::array<uint8_t, 5> slots_of(int v) {
  return {static_cast<uint8_t>(v / 81), static_cast<uint8_t>(v / 27 % 3), static_cast<uint8_t>(v / 9 % 3),
          static_cast<uint8_t>(v / 3 % 3), static_cast<uint8_t>(v % 3)};
}

TEST(TritRows, EveryFiveTritPatternHasItsOwnByteAndComesBack) {
  std::set<uint8_t> bytes;
  for (int v = 0; v < 243; ++v) {
    const uint8_t byte = trit_row_byte(slots_of(v));
    EXPECT_EQ(trit_row_slots(byte), slots_of(v)) << v;
    bytes.insert(byte);
  }
  EXPECT_EQ(bytes.size(), 243u);
  EXPECT_THROW(trit_row_byte({0, 0, 3, 0, 0}), Error);
}

// A PTQ1_0 block's qs byte m (m < 16) holds trit n of element 16n + m: with the top bit flipped, it is
// the trit rows byte of those five trits.
TEST(TritRows, ByteIsPtq1sByteWithTheTopBitFlipped) {
  for (int v = 0; v < 243; ++v) {
    uint8_t trits[128] = {};
    const std::array<uint8_t, 5> slots = slots_of(v);
    for (int n = 0; n < 5; ++n) trits[16 * n + 3] = slots[n];
    uint8_t block[kPtq1Bytes];
    ptq1_pack(trits, 0x3c00, block);
    EXPECT_EQ(trit_row_byte(slots), block[3] ^ 0x80) << v;
  }
}

TEST(TritRows, RowSizeIsSourcesThenScales) {
  EXPECT_EQ(trit_row_sources(128), 1);
  EXPECT_EQ(trit_row_sources(128 * 5), 4);
  EXPECT_EQ(trit_row_sources(128 * 6), 5);
  EXPECT_EQ(row_bytes(TensorType::kTritRows, 5120), 32 * 32 + 80);     // 1104, PTQ1_0 1120
  EXPECT_EQ(row_bytes(TensorType::kTritRows, 17408), 109 * 32 + 272);  // 3760, PTQ1_0 3808
  EXPECT_EQ(row_bytes(TensorType::kTritRows, 6144), 39 * 32 + 96);     // 1344, PTQ1_0 1344
  EXPECT_EQ(trit_rows_scale_offset(5120, 3), 1024u + 6u);
  EXPECT_FALSE(row_bytes(TensorType::kTritRows, 100));
}

TEST(TritRows, IsNeverAFileType) {
  EXPECT_FALSE(type_from_id(static_cast<uint32_t>(TensorType::kTritRows)));
  EXPECT_FALSE(type_from_name("trit_rows"));
  EXPECT_TRUE(is_ternary(TensorType::kTritRows));
}

// Block b's element e sits in slot v % 5 of source v / 5 at byte e / 4, v = 4b + e % 4: PQ2_0's field
// e % 4 of qs byte e / 4, as the AVX2 kernel hands the code vectors to the PQ2_0 step.
TEST(TritRows, ElementsSitWhereThePq2CodeVectorsHaveThem) {
  const int64_t blocks = 7, k = 128 * blocks;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int e : {0, 1, 2, 3, 5, 66, 127}) {
      std::vector<uint8_t> trits(k, 1);
      std::vector<uint16_t> scales(blocks, 0x3c00);
      trits[b * 128 + e] = 2;
      std::vector<uint8_t> row(*row_bytes(TensorType::kTritRows, k));
      trit_rows_store_row(row.data(), k, trits.data(), scales.data());
      const int64_t vector = 4 * b + e % 4;
      EXPECT_EQ(trit_row_slots(row[vector / 5 * 32 + e / 4])[vector % 5], 2) << b << "," << e;
      int twos = 0;
      for (int64_t i = 0; i < trit_row_sources(k) * 32; ++i)
        for (uint8_t t : trit_row_slots(row[i])) twos += t == 2;
      EXPECT_EQ(twos, 1);
    }
  }
}

}  // namespace
}  // namespace tern::quant
