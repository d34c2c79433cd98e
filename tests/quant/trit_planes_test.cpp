// Trit planes (quant/trit_planes.h): the byte code and the layout the VBMI kernels rely on (the re-packs:
// trit_row_forms_test.cpp).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
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

}  // namespace
}  // namespace tern::quant
