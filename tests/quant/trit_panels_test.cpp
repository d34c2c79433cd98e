// Trit panels (quant/trit_panels.h): sizes, the byte layout the VBMI kernel reads, the lossless round trip
// to PQ2_0 rows, PTQ1_0 rows packed to the bytes of their PQ2_0 twins, code 3 refused, and the type's traits
// (in memory only, refused by the one-row codec calls).
#include "quant/trit_panels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"
#include "quant/pq2_panels.h"
#include "quant/trit_planes.h"
#include "quant/types.h"
#include "tests/support/random_pq2.h"

namespace tern::quant {
namespace {

size_t pq2_row(int64_t k) {
  return static_cast<size_t>(k / kTernaryBlock) * kPq2Bytes;
}

std::vector<uint8_t> packed(const std::vector<uint8_t>& rows_bytes, int64_t rows, int64_t k) {
  std::vector<uint8_t> out(trit_panels_bytes(rows, k), 0xcd);
  pack_trit_panels(rows_bytes.data(), pq2_row(k), rows, k, out.data());
  return out;
}

TEST(TritPanels, SizesAreUnitsOfThirtyTwoSourcesAfterThePanelScales) {
  EXPECT_EQ(trit_panel_units(5120), 8);
  EXPECT_EQ(trit_panel_units(17408), 28);  // 136 blocks: 27 whole units and one of a block
  EXPECT_EQ(trit_panel_bytes(5120), pq2_panel_scale_bytes(5120) + 8 * 32 * 64u);
  EXPECT_EQ(trit_panels_row_bytes(5120), 1104u);   // PTQ1_0 1120, trit planes 1104
  EXPECT_EQ(trit_panels_row_bytes(6144), 1376u);   // PTQ1_0 1344, trit planes 1376
  EXPECT_EQ(trit_panels_row_bytes(17408), 3856u);  // PTQ1_0 3808
  EXPECT_EQ(trit_panels_bytes(17, 640), 2 * trit_panel_bytes(640));
  EXPECT_EQ(row_bytes(TensorType::kTritPanels, 5120), 1104u);
  EXPECT_EQ(matrix_bytes(TensorType::kTritPanels, 17, 640), trit_panels_bytes(17, 640));
  EXPECT_EQ(matrix_bytes(TensorType::kPq2Panels, 17, 640), pq2_panels_bytes(17, 640));
  EXPECT_EQ(matrix_bytes(TensorType::kPQ2_0, 17, 640), 17 * pq2_row(640));
  EXPECT_FALSE(row_bytes(TensorType::kTritPanels, 100));
}

TEST(TritPanels, SourceSlotsHoldTheCodesOfFiveBlocks) {
  const int64_t rows = 20, k = 128 * 7;  // a whole unit and one of two blocks
  const std::vector<uint8_t> src = testing_support::random_trit_pq2_rows(rows, k, 3);
  const std::vector<uint8_t> panels = packed(src, rows, k);
  const size_t panel = trit_panel_bytes(k), scales = pq2_panel_scale_bytes(k);
  for (int64_t row : {0, 5, 15, 16, 19}) {
    for (int64_t b = 0; b < 7; ++b) {
      const uint8_t* block =
          src.data() + static_cast<size_t>(row) * pq2_row(k) + static_cast<size_t>(b) * kPq2Bytes;
      const uint8_t* p = panels.data() + static_cast<size_t>(row / 16) * panel;
      const int64_t r = row % 16;
      EXPECT_EQ(p[2 * (16 * b + r)], block[0]);
      EXPECT_EQ(p[2 * (16 * b + r) + 1], block[1]);
      for (int64_t q : {0, 3, 7}) {
        for (int64_t s = 0; s < 4; ++s) {
          for (int64_t i = 0; i < 4; ++i) {
            const size_t source = scales + 64 * static_cast<size_t>(32 * (b / 5) + 4 * q + s);
            const uint8_t code = (block[2 + 4 * q + i] >> (2 * s)) & 3u;
            EXPECT_EQ(trit_plane_slots(p[source + 4 * r + i])[b % 5], code)
                << "row " << row << " block " << b << " dword " << q << " field " << s;
          }
        }
      }
    }
  }
}

TEST(TritPanels, RoundTripToRowsIsLossless) {
  for (int64_t k : {128, 640, 896, 5120, 6144}) {
    for (int64_t rows : {1, 15, 16, 17, 40}) {
      const std::vector<uint8_t> src =
          testing_support::random_trit_pq2_rows(rows, k, static_cast<uint32_t>(k + rows));
      const std::vector<uint8_t> panels = packed(src, rows, k);
      std::vector<uint8_t> back(src.size(), 0xab);
      trit_panels_to_rows(panels.data(), k, 0, rows, back.data());
      EXPECT_EQ(back, src) << "k " << k << " rows " << rows;
      if (rows > 5) {  // a range inside the matrix, starting mid-panel
        std::vector<uint8_t> part(static_cast<size_t>(rows - 5) * pq2_row(k));
        trit_panels_to_rows(panels.data(), k, 3, rows - 2, part.data());
        EXPECT_EQ(0, std::memcmp(part.data(), src.data() + 3 * pq2_row(k),
                                 static_cast<size_t>(rows - 5) * pq2_row(k)));
      }
    }
  }
}

TEST(TritPanels, PtqOneRowsPackToTheBytesOfTheirPq2Twins) {
  for (int64_t k : {128, 640, 896, 5120}) {
    for (int64_t rows : {1, 16, 17, 40}) {
      const std::vector<uint8_t> pq2 =
          testing_support::random_trit_pq2_rows(rows, k, static_cast<uint32_t>(3 * k + rows));
      const size_t ptq1_row = *row_bytes(TensorType::kPTQ1_0, k);
      std::vector<uint8_t> ptq1(static_cast<size_t>(rows) * ptq1_row);
      for (int64_t r = 0; r < rows; ++r) {
        transcode_row(TensorType::kPQ2_0, TensorType::kPTQ1_0,
                      pq2.data() + static_cast<size_t>(r) * pq2_row(k),
                      ptq1.data() + static_cast<size_t>(r) * ptq1_row, k, "test");
      }
      std::vector<uint8_t> direct(trit_panels_bytes(rows, k), 0xcd);
      pack_trit_panels_ptq1(ptq1.data(), ptq1_row, rows, k, direct.data());
      EXPECT_EQ(direct, packed(pq2, rows, k)) << "k " << k << " rows " << rows;
    }
  }
}

TEST(TritPanels, LoadBlockGivesTheRowsCodesInElementOrder) {
  const int64_t rows = 18, k = 640;
  const std::vector<uint8_t> src = testing_support::random_trit_pq2_rows(rows, k, 11);
  const std::vector<uint8_t> panels = packed(src, rows, k);
  uint8_t codes[128];
  uint16_t d_bits = 0;
  trit_panels_load_block(panels.data(), k, 17, 4, codes, &d_bits);
  const uint8_t* block = src.data() + 17 * pq2_row(k) + 4 * kPq2Bytes;
  EXPECT_EQ(d_bits, block[0] | block[1] << 8);
  for (int e = 0; e < 128; ++e) EXPECT_EQ(codes[e], (block[2 + e / 4] >> (2 * (e % 4))) & 3u) << e;
}

TEST(TritPanels, CodeThreeIsRefusedWithTheRowAndBlock) {
  const int64_t k = 256;
  std::vector<uint8_t> src = testing_support::random_trit_pq2_rows(3, k, 5);
  src[2 * pq2_row(k) + kPq2Bytes + 9] = 0xc0;  // row 2, block 1: code 3 in field 3
  std::vector<uint8_t> out(trit_panels_bytes(3, k));
  try {
    pack_trit_panels(src.data(), pq2_row(k), 3, k, out.data());
    FAIL() << "code 3 was packed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 2 block 1"), std::string::npos) << e.what();
  }
}

TEST(TritPanels, IsAnInMemoryTernaryTypeTheRowCodecsRefuse) {
  EXPECT_FALSE(type_from_id(static_cast<uint32_t>(TensorType::kTritPanels)));
  EXPECT_FALSE(type_from_name("trit_panels"));
  EXPECT_EQ(traits(TensorType::kTritPanels).name, "trit_panels");
  EXPECT_TRUE(is_ternary(TensorType::kTritPanels));
  EXPECT_TRUE(is_panel_form(TensorType::kTritPanels));
  EXPECT_FALSE(is_panel_form(TensorType::kTritPlanes));
  std::vector<uint8_t> bytes(4096);
  std::vector<float> values(128);
  EXPECT_THROW(dequantize_row(TensorType::kTritPanels, bytes.data(), values.data(), 128), Error);
  EXPECT_THROW(quantize_row(TensorType::kTritPanels, values.data(), bytes.data(), 128), Error);
}

}  // namespace
}  // namespace tern::quant
