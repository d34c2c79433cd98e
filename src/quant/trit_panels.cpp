#include "quant/trit_panels.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "quant/codec.h"
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

// trit_plane_byte of the five trits whose base-3 digits, most significant first, make v (< 243).
uint8_t encode_trits(int v) {
  static const std::array<uint8_t, 243> table = [] {
    std::array<uint8_t, 243> bytes{};
    for (int digits = 0; digits < 243; ++digits) {
      bytes[static_cast<size_t>(digits)] =
          trit_plane_byte({static_cast<uint8_t>(digits / 81), static_cast<uint8_t>(digits / 27 % 3),
                           static_cast<uint8_t>(digits / 9 % 3), static_cast<uint8_t>(digits / 3 % 3),
                           static_cast<uint8_t>(digits % 3)});
    }
    return bytes;
  }();
  return table[static_cast<size_t>(v)];
}

// Row r of a panel from its blocks' trits (block b's element e at trits[128·b + e]) and scale bits.
void write_panel_row(const uint8_t* trits, const uint16_t* d_bits, int64_t r, int64_t k, uint8_t* panel) {
  const int64_t blocks = blocks_of(k);
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* scale = panel + pq2_panel_scale_offset(b, r);
    scale[0] = static_cast<uint8_t>(d_bits[b] & 0xffu);
    scale[1] = static_cast<uint8_t>(d_bits[b] >> 8);
  }
  uint8_t* sources = panel + pq2_panel_scale_bytes(k);
  for (int64_t u = 0; u < trit_panel_units(k); ++u) {
    const int64_t in_unit = std::min(kTritPanelBlocksPerUnit, blocks - kTritPanelBlocksPerUnit * u);
    const uint8_t* unit = trits + kTritPanelBlocksPerUnit * u * kTernaryBlock;
    for (int64_t q = 0; q < kPq2PanelDwords; ++q) {
      for (int64_t s = 0; s < 4; ++s) {
        for (int64_t i = 0; i < kQsDwordBytes; ++i) {
          const int64_t element = 4 * (kQsDwordBytes * q + i) + s;  // field s of qs byte 4q + i
          int v = 0;
          for (int64_t j = 0; j < kTritPanelBlocksPerUnit; ++j)
            v = 3 * v + (j < in_unit ? unit[j * kTernaryBlock + element] : 0);
          sources[source_byte(u, q, s, r, i)] = encode_trits(v);
        }
      }
    }
  }
}

// Panels of `rows` rows, each row's trits and scales from decode(row, trits, d_bits).
template <class Decode>
void pack_rows(int64_t rows, int64_t k, uint8_t* out, Decode&& decode) {
  const size_t panel_bytes = trit_panel_bytes(k);
  std::memset(out, 0, trit_panels_bytes(rows, k));
  std::vector<uint8_t> trits(static_cast<size_t>(blocks_of(k) * kTernaryBlock));
  std::vector<uint16_t> d_bits(static_cast<size_t>(blocks_of(k)));
  for (int64_t row = 0; row < rows; ++row) {
    decode(row, trits.data(), d_bits.data());
    write_panel_row(trits.data(), d_bits.data(), row % kPq2PanelRows, k,
                    out + static_cast<size_t>(row / kPq2PanelRows) * panel_bytes);
  }
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
  pack_rows(rows, k, out, [&](int64_t row, uint8_t* trits, uint16_t* d_bits) {
    const uint8_t* src_row = src + static_cast<size_t>(row) * src_row_bytes;
    for (int64_t b = 0; b < blocks_of(k); ++b) {
      uint8_t* codes = trits + b * kTernaryBlock;
      pq2_unpack(src_row + b * kBlockBytes, codes, &d_bits[b]);
      for (int64_t e = 0; e < kTernaryBlock; ++e) {
        if (codes[e] == 3)
          fail(ErrorKind::kInput, "trit panels: row {} block {} holds code 3, which is no trit", row, b);
      }
    }
  });
}

void pack_trit_panels_ptq1(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out) {
  pack_rows(rows, k, out, [&](int64_t row, uint8_t* trits, uint16_t* d_bits) {
    const uint8_t* src_row = src + static_cast<size_t>(row) * src_row_bytes;
    for (int64_t b = 0; b < blocks_of(k); ++b)
      ptq1_unpack(src_row + b * static_cast<int64_t>(kPtq1Bytes), trits + b * kTernaryBlock, &d_bits[b]);
  });
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
