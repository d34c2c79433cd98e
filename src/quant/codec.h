// Scalar reference encode/decode of every block format, and lossless ternary transcoding
// (model-spec §3.2-§3.5). These are the oracle the fast kernels are tested against.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/types.h"

namespace tern::quant {

inline constexpr int kTernaryBlock = 128;
inline constexpr size_t kPq2Bytes = 34;
inline constexpr size_t kPtq1Bytes = 28;
inline constexpr int kQ2Block = 64;  // mainline Q2_0 (type 42)
inline constexpr size_t kQ2Bytes = 18;

// dequantize_row, quantize_row and transcode_row take one row's bytes, which the panel forms do not have
// (quant/pq2_panels.h, quant/trit_panels.h): they throw Error(kInternal) for kPq2Panels and kTritPanels.

// Decode k values (k a multiple of the type's block) into fp32. Ternary values are
// (code-1) * fp32(d); PQ2_0 and Q2_0 decode code 3 as +2d. Throws Error(kInput) if k is negative or
// not a multiple of the block.
void dequantize_row(TensorType type, const uint8_t* src, float* dst, int64_t k);

// Encode k fp32 values (same k rule as dequantize_row). Float types round to nearest even.
// Ternary types, per block: the stored scale is s = fp16(max|w|), and q = clamp(roundf(w / fp32(s)) + 1,
// 0, 3) (PTQ1_0 clamps to 2); if fp32(s) == 0 every q = 1. Dividing by the *stored* scale rather than the
// fp32 max|w| makes each q the nearest code for the value the file will actually decode to, so
// |w - dequant(w)| <= s/2, and a block whose values are exactly {-s, 0, +s} round-trips bit-exactly
// (for such data both choices agree). |w / fp32(s)| <= 1.5 always holds, so code 3 never arises.
// Throws Error(kInput) for a non-finite value or a max|w| that overflows fp16.
void quantize_row(TensorType type, const float* src, uint8_t* dst, int64_t k);

// PQ2_0 block <-> its 128 codes (0..3) and fp16 scale bits. pq2_pack uses the low 2 bits of each code.
void pq2_unpack(const uint8_t* block, uint8_t codes[128], uint16_t* d_bits);
void pq2_pack(const uint8_t codes[128], uint16_t d_bits, uint8_t* block);
// PTQ1_0 block <-> its 128 trits (0..2) in element order, and fp16 scale bits (§3.4 staged order).
// ptq1_pack throws Error(kInput) for a trit above 2.
void ptq1_unpack(const uint8_t* block, uint8_t trits[128], uint16_t* d_bits);
void ptq1_pack(const uint8_t trits[128], uint16_t d_bits, uint8_t* block);

// Lossless re-pack of one row of k values between ternary types (PQ2_0, PTQ1_0, Q2_0 and the in-memory
// trit planes and trit rows, quant/trit_planes.h and trit_rows.h), copying the fp16 scale bits exactly (so
// -0, subnormal and NaN scales survive). Q2_0 is handled as pairs of 64-blocks: to Q2_0 both halves get the
// 128-block's scale; from Q2_0 to a 128-block type the two halves must have the same scale bits. from == to
// is a plain copy for any type. Throws Error(kFormat), naming `where` and the source block, if a code 3 is
// headed for PTQ1_0 (or a trit form) or two Q2_0 halves disagree; Error(kInput) if k is not a multiple of
// both blocks or a type is not ternary.
void transcode_row(TensorType from, TensorType to, const uint8_t* src, uint8_t* dst, int64_t k,
                   const char* where);

}  // namespace tern::quant
