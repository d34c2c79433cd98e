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

// Decode k values (k a multiple of the type's block) into fp32.
void dequantize_row(TensorType type, const uint8_t* src, float* dst, int64_t k);
// Encode k fp32 values. Ternary types: d = max|w| per block, q = clamp(round(w/d)+1, 0, 3)
// (PTQ1_0 clamps to 2). Float types round to nearest even.
void quantize_row(TensorType type, const float* src, uint8_t* dst, int64_t k);

// PQ2_0 block <-> its 128 codes (0..3) and fp16 scale bits.
void pq2_unpack(const uint8_t* block, uint8_t codes[128], uint16_t* d_bits);
void pq2_pack(const uint8_t codes[128], uint16_t d_bits, uint8_t* block);
// PTQ1_0 block <-> its 128 trits (0..2) in element order, and fp16 scale bits (§3.4 staged order).
void ptq1_unpack(const uint8_t* block, uint8_t trits[128], uint16_t* d_bits);
void ptq1_pack(const uint8_t trits[128], uint16_t d_bits, uint8_t* block);

// Lossless re-pack of one row between ternary types (PQ2_0 <-> PTQ1_0, PQ2_0 -> Q2_0 by
// splitting each 128-block into two 64-blocks with the same scale). Throws Error(kFormat) if a
// PQ2_0 block holds code 3 and the target cannot represent it; `where` names the tensor for it.
void transcode_row(TensorType from, TensorType to, const uint8_t* src, uint8_t* dst, int64_t k,
                   const char* where);

}  // namespace tern::quant
