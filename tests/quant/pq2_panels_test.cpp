// PQ2_0 panels (quant/pq2_panels.h): sizes, the byte layout the VBMI kernels read, the lossless round trip
// to rows, and the type's traits (in memory only, refused by the one-row codec calls).
#include "quant/pq2_panels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"
#include "quant/types.h"

namespace tern::quant {
namespace {

size_t pq2_row(int64_t k) {
  return static_cast<size_t>(k / kTernaryBlock) * kPq2Bytes;
}

// Any bytes are PQ2_0 rows (code 3 and odd scale bits included), so random ones test every bit.
std::vector<uint8_t> random_rows(int64_t rows, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(rows) * pq2_row(k));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

std::vector<uint8_t> packed(const std::vector<uint8_t>& rows_bytes, int64_t rows, int64_t k) {
  // Filled first, so bytes the pack leaves unwritten show up as 0xcd, not as zeros by luck.
  std::vector<uint8_t> out(pq2_panels_bytes(rows, k), 0xcd);
  pack_pq2_panels(rows_bytes.data(), pq2_row(k), rows, k, out.data());
  return out;
}

TEST(Pq2Panels, SizesAreSixteenRowsWithScalesPaddedToALine) {
  EXPECT_EQ(pq2_panel_scale_bytes(128), 64u);  // 32 bytes of scales, padded
  EXPECT_EQ(pq2_panel_scale_bytes(640), 192u);
  EXPECT_EQ(pq2_panel_scale_bytes(5120), 1280u);
  EXPECT_EQ(pq2_panel_bytes(128), 1 * 544u + 32);  // odd block count: 32 bytes of padding
  EXPECT_EQ(pq2_panel_bytes(640), 5 * 544u + 32);
  EXPECT_EQ(pq2_panel_bytes(5120), 40 * 544u);  // even: exactly sixteen PQ2_0 rows
  EXPECT_EQ(pq2_panel_bytes(17408), 136 * 544u);
  EXPECT_EQ(pq2_panels_bytes(0, 640), 0u);
  EXPECT_EQ(pq2_panels_bytes(1, 640), pq2_panel_bytes(640));
  EXPECT_EQ(pq2_panels_bytes(16, 640), pq2_panel_bytes(640));
  EXPECT_EQ(pq2_panels_bytes(17, 640), 2 * pq2_panel_bytes(640));
  EXPECT_EQ(pq2_panels_bytes(40, 5120), 3 * 40 * 544u);
}

TEST(Pq2Panels, PackThenRowsGivesTheRowsBackByteForByte) {
  for (const int64_t k : {128, 640, 5120}) {
    for (const int64_t rows : {1, 15, 16, 17, 40}) {
      SCOPED_TRACE(testing::Message() << rows << " x " << k);
      const std::vector<uint8_t> original = random_rows(rows, k, static_cast<uint32_t>(rows * 7 + k));
      const std::vector<uint8_t> panels = packed(original, rows, k);
      std::vector<uint8_t> back(original.size(), 0xee);
      pq2_panels_to_rows(panels.data(), k, 0, rows, back.data());
      EXPECT_EQ(back, original);

      // A range starting inside a panel, as a kernel's slab re-pack asks for it.
      const int64_t first = rows / 3;
      std::vector<uint8_t> tail(static_cast<size_t>(rows - first) * pq2_row(k));
      pq2_panels_to_rows(panels.data(), k, first, rows, tail.data());
      EXPECT_TRUE(
          std::equal(tail.begin(), tail.end(), original.begin() + first * static_cast<int64_t>(pq2_row(k))));

      // The last panel's missing rows read as zero scale and codes.
      const int64_t padded = (rows + kPq2PanelRows - 1) / kPq2PanelRows * kPq2PanelRows;
      std::vector<uint8_t> missing(static_cast<size_t>(padded - rows) * pq2_row(k), 0xee);
      pq2_panels_to_rows(panels.data(), k, rows, padded, missing.data());
      EXPECT_EQ(missing, std::vector<uint8_t>(missing.size(), 0));
    }
  }
}

TEST(Pq2Panels, ScalePaddingIsZero) {
  const int64_t k = 640;  // 5 blocks: 160 bytes of scales in a 192-byte region
  const std::vector<uint8_t> panels = packed(random_rows(20, k, 3), 20, k);
  for (int64_t p = 0; p < 2; ++p) {
    for (size_t i = 160; i < 192; ++i)
      EXPECT_EQ(panels[static_cast<size_t>(p) * 2752 + i], 0) << p << " " << i;
  }
}

// Row r, block b of this matrix has scale bytes {r, 0x80 + b} and qs byte i = 3r + 5b + i: every byte
// says where it came from, so a layout that round-trips but puts bytes elsewhere fails here.
TEST(Pq2Panels, BytesSitWhereTheHeaderSays) {
  const int64_t k = 640, rows = 20, blocks = 5;
  std::vector<uint8_t> src(static_cast<size_t>(rows) * pq2_row(k));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* block = &src[static_cast<size_t>(r) * pq2_row(k) + static_cast<size_t>(b) * kPq2Bytes];
      block[0] = static_cast<uint8_t>(r);
      block[1] = static_cast<uint8_t>(0x80 + b);
      for (int i = 0; i < 32; ++i) block[2 + i] = static_cast<uint8_t>(3 * r + 5 * b + i);
    }
  }
  const std::vector<uint8_t> panels = packed(src, rows, k);
  ASSERT_EQ(panels.size(), 2u * 2752);
  const auto at = [&](size_t offset) { return static_cast<int>(panels[offset]); };
  // Scales: row r's block b at byte 2·(16·b + r) of its panel.
  EXPECT_EQ(at(0), 0);  // row 0, block 0
  EXPECT_EQ(at(1), 0x80);
  EXPECT_EQ(at(2), 1);   // row 1, block 0
  EXPECT_EQ(at(32), 0);  // row 0, block 1
  EXPECT_EQ(at(33), 0x81);
  EXPECT_EQ(at(2 * (16 * 4 + 15)), 15);  // row 15, block 4
  EXPECT_EQ(at(2 * (16 * 4 + 15) + 1), 0x84);
  EXPECT_EQ(at(2752 + 2 * (16 * 2 + 3)), 19);  // panel 1: row 19 (r = 3), block 2
  EXPECT_EQ(at(2752 + 2 * (16 * 2 + 3) + 1), 0x82);
  // Codes after the 192-byte scale region: vector 8·b + q holds qs bytes 4q..4q+3 of row r at 4r..4r+3.
  EXPECT_EQ(at(192 + 0), 0);                              // row 0, block 0, qs[0]
  EXPECT_EQ(at(192 + 3), 3);                              // qs[3]
  EXPECT_EQ(at(192 + 4), 3);                              // row 1, block 0, qs[0] = 3·1
  EXPECT_EQ(at(192 + 64), 4);                             // vector 1: row 0, block 0, qs[4]
  EXPECT_EQ(at(192 + 64 * 7 + 4 * 15 + 3), 3 * 15 + 31);  // row 15, block 0, qs[31]
  EXPECT_EQ(at(192 + 64 * 8), 5);                         // vector 8: row 0, block 1, qs[0]
  EXPECT_EQ(at(2752 + 192 + 64 * (8 * 2 + 5) + 4 * 3 + 1),
            3 * 19 + 5 * 2 + 4 * 5 + 1);                                 // row 19, b 2, qs[21]
  EXPECT_EQ(at(2752 + 192 + 64 * 39 + 4 * 3 + 3), 3 * 19 + 5 * 4 + 31);  // row 19, block 4, qs[31]
  EXPECT_EQ(at(2752 + 192 + 64 * 39 + 4 * 4), 0);                        // row 20: missing, zero
}

TEST(Pq2Panels, IsAnInMemoryTernaryFormWithPq2RowBytes) {
  EXPECT_EQ(static_cast<uint32_t>(TensorType::kPq2Panels), 0x10000u + 142);
  EXPECT_FALSE(type_from_id(static_cast<uint32_t>(TensorType::kPq2Panels)));
  EXPECT_FALSE(type_from_name("pq2_panels"));
  EXPECT_EQ(traits(TensorType::kPq2Panels).name, "pq2_panels");
  EXPECT_EQ(traits(TensorType::kPq2Panels).block_elems, 128);
  EXPECT_EQ(traits(TensorType::kPq2Panels).block_bytes, 34u);
  EXPECT_TRUE(is_ternary(TensorType::kPq2Panels));
  EXPECT_FALSE(traits(TensorType::kPq2Panels).in_files);
  EXPECT_EQ(row_bytes(TensorType::kPq2Panels, 640), row_bytes(TensorType::kPQ2_0, 640));
  EXPECT_EQ(row_bytes(TensorType::kPq2Panels, 5120), 40u * 34);
  EXPECT_FALSE(row_bytes(TensorType::kPq2Panels, 100));
}

void expect_internal(const std::function<void()>& call, const char* what) {
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("pq2_panels"), std::string::npos) << e.what();
  }
}

TEST(Pq2Panels, OneRowCodecCallsRefuseIt) {
  std::vector<uint8_t> bytes(pq2_panels_bytes(1, 256));
  std::vector<float> values(256, 0.5f);
  expect_internal([&] { dequantize_row(TensorType::kPq2Panels, bytes.data(), values.data(), 256); },
                  "dequantize_row");
  expect_internal([&] { quantize_row(TensorType::kPq2Panels, values.data(), bytes.data(), 256); },
                  "quantize_row");
  std::vector<uint8_t> row(2 * kPq2Bytes);
  expect_internal(
      [&] { transcode_row(TensorType::kPq2Panels, TensorType::kPQ2_0, bytes.data(), row.data(), 256, "t"); },
      "transcode_row from");
  expect_internal(
      [&] { transcode_row(TensorType::kPQ2_0, TensorType::kPq2Panels, row.data(), bytes.data(), 256, "t"); },
      "transcode_row to");
  expect_internal(
      [&] {
        transcode_row(TensorType::kPq2Panels, TensorType::kPq2Panels, bytes.data(), bytes.data(), 256, "t");
      },
      "transcode_row same");
}

}  // namespace
}  // namespace tern::quant
