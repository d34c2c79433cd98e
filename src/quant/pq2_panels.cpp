#include "quant/pq2_panels.h"

#include <cstring>

namespace tern::quant {

namespace {

constexpr size_t kBlockBytes = 34;  // PQ2_0: {fp16 d; u8 qs[32]}
constexpr size_t kDwordBytes = 4;

int64_t blocks_of(int64_t k) {
  return k / 128;
}

// Byte offset, within a panel, of row r's qs dword q, block b.
size_t dword_offset(int64_t k, int64_t b, int64_t q, int64_t r) {
  return pq2_panel_scale_bytes(k) + kPq2PanelVectorBytes * static_cast<size_t>(kPq2PanelDwords * b + q) +
         kDwordBytes * static_cast<size_t>(r);
}

}  // namespace

size_t pq2_panel_scale_bytes(int64_t k) {
  const size_t bytes = 2 * static_cast<size_t>(kPq2PanelRows * blocks_of(k));
  return (bytes + kPq2PanelVectorBytes - 1) / kPq2PanelVectorBytes * kPq2PanelVectorBytes;
}

size_t pq2_panel_bytes(int64_t k) {
  return pq2_panel_scale_bytes(k) +
         kPq2PanelVectorBytes * static_cast<size_t>(kPq2PanelDwords * blocks_of(k));
}

size_t pq2_panels_bytes(int64_t rows, int64_t k) {
  return static_cast<size_t>((rows + kPq2PanelRows - 1) / kPq2PanelRows) * pq2_panel_bytes(k);
}

void pack_pq2_panels(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out) {
  const size_t panel_bytes = pq2_panel_bytes(k);
  std::memset(out, 0, pq2_panels_bytes(rows, k));
  for (int64_t row = 0; row < rows; ++row) {
    uint8_t* panel = out + static_cast<size_t>(row / kPq2PanelRows) * panel_bytes;
    const int64_t r = row % kPq2PanelRows;
    for (int64_t b = 0; b < blocks_of(k); ++b) {
      const uint8_t* block =
          src + static_cast<size_t>(row) * src_row_bytes + static_cast<size_t>(b) * kBlockBytes;
      std::memcpy(panel + pq2_panel_scale_offset(b, r), block, 2);
      for (int64_t q = 0; q < kPq2PanelDwords; ++q)
        std::memcpy(panel + dword_offset(k, b, q, r), block + 2 + kDwordBytes * static_cast<size_t>(q),
                    kDwordBytes);
    }
  }
}

void pq2_panels_to_rows(const uint8_t* panels, int64_t k, int64_t row_begin, int64_t row_end, uint8_t* out) {
  const size_t panel_bytes = pq2_panel_bytes(k);
  const size_t row_bytes = static_cast<size_t>(blocks_of(k)) * kBlockBytes;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const uint8_t* panel = panels + static_cast<size_t>(row / kPq2PanelRows) * panel_bytes;
    const int64_t r = row % kPq2PanelRows;
    uint8_t* dst = out + static_cast<size_t>(row - row_begin) * row_bytes;
    for (int64_t b = 0; b < blocks_of(k); ++b) {
      uint8_t* block = dst + static_cast<size_t>(b) * kBlockBytes;
      std::memcpy(block, panel + pq2_panel_scale_offset(b, r), 2);
      for (int64_t q = 0; q < kPq2PanelDwords; ++q)
        std::memcpy(block + 2 + kDwordBytes * static_cast<size_t>(q), panel + dword_offset(k, b, q, r),
                    kDwordBytes);
    }
  }
}

}  // namespace tern::quant
