// Trit rows: tern's in-memory form of a PTQ1_0 matrix for the AVX2 decode kernel
// (kernels/cpu/trit_rows.h), for CPUs without the AVX-512 VBMI lookups of trit panels and trit planes.
// Never stored in a file (quant::TypeTraits::in_files is false). A lossless re-pack of the file's trits and
// fp16 scales: memory ≈ the file, where PTQ1_0 transcoded to PQ2_0 takes 1.21 × it.
//
// A row of k = 128·B values: S = ceil(4B / 5) sources of 32 bytes, then B fp16 scales (little endian).
// Code vector v = 4b + f is PQ2_0's field f of block b (its byte i holds element 4i + f, the code PQ2_0
// keeps in bits 2f of qs byte i) and is trit slot v % 5 of source v / 5. Slots past the last code vector
// hold trit 0 and are never read as weights.
//
// A byte holds slots t0..t4 as PTQ1_0's byte code with its top bit flipped: ceil(V·256 / 243) ^ 0x80,
// V = 81·t0 + 27·t1 + 9·t2 + 3·t3 + t4 (model-spec §3.4). For the signed byte s_n = 3^n · byte mod 256
// (3^n is odd, so the flip survives the product), slot n is [s_n > −43] + [s_n > 42]: per slot two byte
// adds for the × 3 and two signed compares, all AVX2 byte operations. Size: 1.6 bits a value plus the
// scales; the 27B's rows take 1104 (k = 5120), 1344 (6144) and 3760 (17408) bytes, against PTQ1_0's
// 1120, 1344 and 3808.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tern::quant {

inline constexpr int64_t kTritRowSourceBytes = 32;
inline constexpr int kTritRowSlots = 5;
inline constexpr int kTritRowVectorsPerBlock = 4;

// Sources and bytes of one row of k values (k a multiple of 128).
int64_t trit_row_sources(int64_t k);
size_t trit_rows_row_bytes(int64_t k);
// Offset of block b's fp16 scale in a row of k values.
size_t trit_rows_scale_offset(int64_t k, int64_t b);

// One byte's five slots (0..2 each) <-> the byte.
uint8_t trit_row_byte(const std::array<uint8_t, 5>& slots);
std::array<uint8_t, 5> trit_row_slots(uint8_t byte);

// A whole row from its k trits (0..2, element order, block after block) and k / 128 fp16 scale bits.
void trit_rows_store_row(uint8_t* row, int64_t k, const uint8_t* trits, const uint16_t* d_bits);
// Block b of a row of k values: its 128 trits in element order and fp16 scale bits.
void trit_rows_load_block(const uint8_t* row, int64_t k, int64_t b, uint8_t trits[128], uint16_t* d_bits);

}  // namespace tern::quant
