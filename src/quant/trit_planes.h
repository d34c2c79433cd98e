// Trit planes: tern's in-memory form of a PTQ1_0 matrix for the AVX-512 VBMI decode kernel
// (kernels/cpu/trit_planes.h). Never stored in a file (quant::TypeTraits::in_files is false).
//
// The same trits and fp16 scales as PTQ1_0 (a lossless re-pack, transcode_row), five trits a byte, laid
// out so that table lookups on a 64-byte load give, with no shuffle, the 2-bit-code vectors the PQ2_0
// kernels unpack (kernels/cpu/pq2_avx512.h): the matmul on either form is then one and the same
// arithmetic, bit for bit.
//
// A row of k = 128·B values: S = ceil(2B / 5) sources of 64 bytes, then B fp16 scales (little endian).
// Code vector v = 2b + h (h = 0: PQ2_0's [c0|c1], h = 1: [c2|c3] of block b) is trit slot v % 5 of
// source v / 5; its byte p holds element 4·(p % 32) + 2h + p / 32 of block b (act_quant.h's order).
// Slots past the last code vector hold trit 0 and are never read as weights.
//
// A byte holds slots (t0..t4) as 128·H + 64·B + Q with Q = 7·(3·t0 + t1) + q (q < 7, so Q < 63) and
// 9·t2 + 3·t3 + t4 = u = 2w + H, w = 2q + B. So t0 and t1 are functions of the low six bits (one
// VPERMB each), and t2..t4 of u < 27 (one VPERMB each), u being one two-register VPERMI2B of the low
// seven bits (2w) plus H by a masked add: eight instructions per 320 trits, one of them two-table.
// Size: 1.6 bits a value plus the scales, but the last source of a row may be part-filled (up to 50 bytes
// a row more than PTQ1_0 on short rows). The 27B: K = 5120 and 17408 take 16 bytes a row less than
// PTQ1_0, K = 6144 32 more (1376 against 1344).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tern::quant {

inline constexpr int64_t kPlaneSourceBytes = 64;
inline constexpr int kSlotsPerByte = 5;
inline constexpr int kCodeVectorsPerBlock = 2;

// Sources and bytes of one row of k values (k a multiple of 128).
int64_t trit_plane_sources(int64_t k);
size_t trit_planes_row_bytes(int64_t k);

// One byte's five slots <-> the byte (slots 0..2 each).
uint8_t trit_plane_byte(const std::array<uint8_t, 5>& slots);
std::array<uint8_t, 5> trit_plane_slots(uint8_t byte);

// A whole row from its k trits (0..2, element order, block after block) and k / 128 fp16 scale bits.
void trit_planes_store_row(uint8_t* row, int64_t k, const uint8_t* trits, const uint16_t* d_bits);
// Block b of a row of k values: its 128 trits in element order and fp16 scale bits.
void trit_planes_load_block(const uint8_t* row, int64_t k, int64_t b, uint8_t trits[128], uint16_t* d_bits);

}  // namespace tern::quant
