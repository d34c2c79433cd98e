// The AVX2 Dot policy of Avx2Lanes (pq2_avx2_lanes.h): a block's lane integers by `vpmaddubsw`, shared by
// the PQ2_0 AVX2 kernel (pq2_matmul_avx2.cpp) and the trit rows kernel (trit_rows_avx2.cpp), which hand
// it the same four code vectors. Included only by *_avx2.cpp files.
#pragma once

#include <immintrin.h>

namespace tern::kernels::cpu {

// kReloadActivations: read the block's activations as memory operands of the multiplies, row after row.
// Decode tiles want it: left to itself, the compiler keeps the eight activation vectors in registers
// across the tile's rows and spills the rows' accumulators and sums to the stack instead (≈ 5 more
// loads and stores per row and block; in L2 the decode tile ran ≈ 1.1–1.15× slower, 12-02 on Zen 3).
// Prompt tiles do not: their tokens' activations are reused by two rows, and reloading them was slower.
template <bool kReloadActivations>
struct MaddubsDot {
  // Each byte's field alone: u8 codes for `vpmaddubsw`.
  static __m256i field_mask() { return _mm256_set1_epi8(3); }
  // Σ code · digit over the four vectors of one digit plane, as int16 pair sums.
  static __m256i plane(const __m256i (&codes)[4], const __m256i* x) {
    const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(codes[0], _mm256_load_si256(x)),
                                         _mm256_maddubs_epi16(codes[1], _mm256_load_si256(x + 1)));
    const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(codes[2], _mm256_load_si256(x + 2)),
                                         _mm256_maddubs_epi16(codes[3], _mm256_load_si256(x + 3)));
    return _mm256_add_epi16(p01, p23);
  }
  // x: the block's hi plane (four vectors), then its lo plane.
  static __m256i lanes(const __m256i (&codes)[4], const __m256i* x, __m256i neg_sums) {
    if constexpr (kReloadActivations) __asm__("" : "+r"(x));  // x is opaque: its loads cannot be hoisted
    const __m256i hi = _mm256_madd_epi16(plane(codes, x), _mm256_set1_epi16(256));
    const __m256i lo = _mm256_madd_epi16(plane(codes, x + 4), _mm256_set1_epi16(1));
    return _mm256_add_epi32(_mm256_add_epi32(hi, lo), neg_sums);
  }
};

}  // namespace tern::kernels::cpu
