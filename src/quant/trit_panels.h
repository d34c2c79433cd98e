// Trit panels: tern's in-memory form of a PTQ1_0 matrix for the AVX-512 VBMI decode kernel
// (kernels/cpu/trit_panels.h). Never stored in a file (quant::TypeTraits::in_files is false).
//
// PQ2_0 panels (quant/pq2_panels.h) with their codes five to a byte as in trit planes
// (quant/trit_planes.h): one 64-byte source expands by table lookups into five of the panels' code
// vectors, so the kernel reads 1.6 bits a weight instead of 2 and otherwise runs the PQ2_0 panel kernel's
// steps. A lossless re-pack of the file's trits and fp16 scales.
//
// Rows go in panels of 16 (the last panel's missing rows are zero). A panel of B = k / 128 blocks has the
// scale region of a PQ2_0 panel (row r's scale of block b at byte 2·(16·b + r), padded with zeros to a
// multiple of 64 bytes), then U = ceil(B / 5) units of 32 sources, one unit per five blocks. Source
// 32·u + 4·q + s holds at byte 4r + i, in trit slot j, the code of row r's block 5u + j at qs byte
// 4q + i, field s: its slot j is PQ2_0 panel vector 8·(5u + j) + q's field s. Slots of blocks past the
// row's end hold 0. The 27B's rows take 1104 (k = 5120), 1376 (6144) and 3856 (17408) bytes, against
// PTQ1_0's 1120, 1344 and 3808.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern::quant {

inline constexpr int64_t kTritPanelBlocksPerUnit = 5;
inline constexpr int64_t kTritPanelSourcesPerUnit = 32;  // 8 qs dwords × 4 fields

// Units of a row of k values, bytes of one panel and of a matrix of `rows` rows (k a multiple of 128).
int64_t trit_panel_units(int64_t k);
size_t trit_panel_bytes(int64_t k);
size_t trit_panels_bytes(int64_t rows, int64_t k);
// Bytes one row takes: a panel's bytes / 16.
size_t trit_panels_row_bytes(int64_t k);

// Writes the trit-panel form of `rows` PQ2_0 rows of k values (row r at src + r · src_row_bytes) to `out`
// (trit_panels_bytes(rows, k) bytes). Fails on code 3, which no trit holds.
void pack_trit_panels(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out);

// The same for PTQ1_0 rows: the bytes pack_trit_panels writes for those rows transcoded to PQ2_0, in one
// pass (each block's trits decoded once, five blocks' trits encoded a byte at a time by table).
void pack_trit_panels_ptq1(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out);

// Rows [row_begin, row_end) of a trit-panel matrix of k values as PQ2_0 rows, row i at
// out + (i − row_begin) · (k / 128) · 34.
void trit_panels_to_rows(const uint8_t* panels, int64_t k, int64_t row_begin, int64_t row_end, uint8_t* out);

// Block b of row `row`: its 128 codes in element order and its fp16 scale bits.
void trit_panels_load_block(const uint8_t* panels, int64_t k, int64_t row, int64_t b, uint8_t codes[128],
                            uint16_t* d_bits);

}  // namespace tern::quant
