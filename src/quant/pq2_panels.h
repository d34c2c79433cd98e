// PQ2_0 panels: tern's in-memory form of a PQ2_0 matrix for the AVX-512 VBMI kernels
// (kernels/cpu/pq2_panel_form.h). Never stored in a file (quant::TypeTraits::in_files is false).
//
// The same codes and fp16 scales as PQ2_0, re-ordered so that one 64-byte load holds the same qs dword
// of sixteen rows: a kernel then gives each row its own int32 lane of a zmm and needs no pairing,
// gathering or lane reduction per row, and the matrix is one sequential stream.
//
// Rows go in panels of 16 (panel p: rows 16p..16p+15; the last panel's missing rows are zero: scale 0,
// codes 0). A panel of B = k / 128 blocks takes pq2_panel_bytes(k) bytes:
//   scales: B × 16 fp16 (little endian), row r's scale of block b at byte 2·(16·b + r), the region
//           padded with zeros to a multiple of 64 bytes;
//   codes:  B × 8 vectors of 64 bytes, vector 8·b + q holding at bytes 4r..4r+3 the qs bytes
//           4q..4q+3 of row r's block b.
// So for an even B a panel is exactly sixteen PQ2_0 rows (544 bytes a block); for an odd B, 32 bytes more.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern::quant {

inline constexpr int64_t kPq2PanelRows = 16;
inline constexpr int64_t kPq2PanelDwords = 8;  // qs dwords of a PQ2_0 block: code vectors a block
inline constexpr size_t kPq2PanelVectorBytes = 64;

// Bytes of the scale region of one panel (k a multiple of 128), of a whole panel, and of a matrix of
// `rows` rows.
size_t pq2_panel_scale_bytes(int64_t k);
size_t pq2_panel_bytes(int64_t k);
size_t pq2_panels_bytes(int64_t rows, int64_t k);
// Byte offset, within a panel, of row r's fp16 scale of block b (trit panels share the scale region).
inline size_t pq2_panel_scale_offset(int64_t b, int64_t r) {
  return 2 * static_cast<size_t>(kPq2PanelRows * b + r);
}

// Writes the panel form of `rows` PQ2_0 rows of k values (row r at src + r · src_row_bytes) to `out`
// (pq2_panels_bytes(rows, k) bytes).
void pack_pq2_panels(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out);

// Rows [row_begin, row_end) of a panel-form matrix of k values as PQ2_0 rows, row i at
// out + (i − row_begin) · (k / 128) · 34.
void pq2_panels_to_rows(const uint8_t* panels, int64_t k, int64_t row_begin, int64_t row_end, uint8_t* out);

}  // namespace tern::quant
