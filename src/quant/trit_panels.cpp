#include "quant/trit_panels.h"

#include <array>
#include <cstring>

#include "core/error.h"
#include "quant/pq2_panels.h"
#include "quant/trit_planes.h"

namespace tern::quant {

namespace {

constexpr size_t kBlockBytes = 34;  // PQ2_0: {fp16 d; u8 qs[32]}
constexpr int64_t kQsDwordBytes = 4;

int64_t blocks_of(int64_t k) {
  return k / 128;
}

// Byte offset, from a panel's first source, of byte 4r + i of the source of unit u, qs dword q, field s.
size_t source_byte(int64_t u, int64_t q, int64_t s, int64_t r, int64_t i) {
  const int64_t source = kTritPanelSourcesPerUnit * u + 4 * q + s;
  return kPq2PanelVectorBytes * static_cast<size_t>(source) + static_cast<size_t>(kQsDwordBytes * r + i);
}

}  // namespace

int64_t trit_panel_units(int64_t k) {
  return (blocks_of(k) + kTritPanelBlocksPerUnit - 1) / kTritPanelBlocksPerUnit;
}

size_t trit_panel_bytes(int64_t k) {
  return pq2_panel_scale_bytes(k) +
         kPq2PanelVectorBytes * static_cast<size_t>(kTritPanelSourcesPerUnit * trit_panel_units(k));
}

size_t trit_panels_bytes(int64_t rows, int64_t k) {
  return static_cast<size_t>((rows + kPq2PanelRows - 1) / kPq2PanelRows) * trit_panel_bytes(k);
}

size_t trit_panels_row_bytes(int64_t k) {
  return trit_panel_bytes(k) / kPq2PanelRows;
}

void pack_trit_panels(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out) {
  const size_t panel_bytes = trit_panel_bytes(k), scale_bytes = pq2_panel_scale_bytes(k);
  const int64_t blocks = blocks_of(k), units = trit_panel_units(k);
  std::memset(out, 0, trit_panels_bytes(rows, k));
  for (int64_t row = 0; row < rows; ++row) {
    uint8_t* panel = out + static_cast<size_t>(row / kPq2PanelRows) * panel_bytes;
    const int64_t r = row % kPq2PanelRows;
    const uint8_t* src_row = src + static_cast<size_t>(row) * src_row_bytes;
    for (int64_t b = 0; b < blocks; ++b)
      std::memcpy(panel + pq2_panel_scale_offset(b, r), src_row + b * kBlockBytes, 2);
    uint8_t* sources = panel + scale_bytes;
    for (int64_t u = 0; u < units; ++u) {
      for (int64_t q = 0; q < kPq2PanelDwords; ++q) {
        for (int64_t s = 0; s < 4; ++s) {
          for (int64_t i = 0; i < kQsDwordBytes; ++i) {
            std::array<uint8_t, 5> slots{};
            for (int64_t j = 0; j < kTritPanelBlocksPerUnit; ++j) {
              const int64_t b = kTritPanelBlocksPerUnit * u + j;
              if (b >= blocks) break;
              const uint8_t qs = src_row[b * kBlockBytes + 2 + kQsDwordBytes * q + i];
              slots[j] = (qs >> (2 * s)) & 3u;
              if (slots[j] == 3) {
                fail(ErrorKind::kInput, "trit panels: row {} block {} holds code 3, which is no trit", row,
                     b);
              }
            }
            sources[source_byte(u, q, s, r, i)] = trit_plane_byte(slots);
          }
        }
      }
    }
  }
}

void trit_panels_load_block(const uint8_t* panels, int64_t k, int64_t row, int64_t b, uint8_t codes[128],
                            uint16_t* d_bits) {
  const uint8_t* panel = panels + static_cast<size_t>(row / kPq2PanelRows) * trit_panel_bytes(k);
  const int64_t r = row % kPq2PanelRows;
  const int64_t u = b / kTritPanelBlocksPerUnit, slot = b % kTritPanelBlocksPerUnit;
  const uint8_t* scale = panel + pq2_panel_scale_offset(b, r);
  *d_bits = static_cast<uint16_t>(scale[0] | (scale[1] << 8));
  const uint8_t* sources = panel + pq2_panel_scale_bytes(k);
  for (int64_t q = 0; q < kPq2PanelDwords; ++q) {
    for (int64_t s = 0; s < 4; ++s) {
      for (int64_t i = 0; i < kQsDwordBytes; ++i) {
        // PQ2_0's element order: field s of qs byte 4q + i is element 4·(4q + i) + s.
        codes[4 * (kQsDwordBytes * q + i) + s] = trit_plane_slots(sources[source_byte(u, q, s, r, i)])[slot];
      }
    }
  }
}

void trit_panels_to_rows(const uint8_t* panels, int64_t k, int64_t row_begin, int64_t row_end, uint8_t* out) {
  const size_t row_bytes = static_cast<size_t>(blocks_of(k)) * kBlockBytes;
  for (int64_t row = row_begin; row < row_end; ++row) {
    uint8_t* dst = out + static_cast<size_t>(row - row_begin) * row_bytes;
    for (int64_t b = 0; b < blocks_of(k); ++b) {
      uint8_t codes[128];
      uint16_t d_bits;
      trit_panels_load_block(panels, k, row, b, codes, &d_bits);
      uint8_t* block = dst + static_cast<size_t>(b) * kBlockBytes;
      block[0] = static_cast<uint8_t>(d_bits & 0xffu);
      block[1] = static_cast<uint8_t>(d_bits >> 8);
      for (int i = 0; i < 32; ++i) {
        block[2 + i] = static_cast<uint8_t>(codes[4 * i] | codes[4 * i + 1] << 2 | codes[4 * i + 2] << 4 |
                                            codes[4 * i + 3] << 6);
      }
    }
  }
}

}  // namespace tern::quant
