// AVX2 PQ2_0 × two-digit int8 kernel. Per 128-weight block and row: one 32-byte load of qs and four
// (qs >> 2s) & 3 code vectors. Per token: eight maddubs (u8 code × s8 digit; four per digit plane,
// summed in int16: at most 4·2·3·127 = 3048, no saturation), two madd to int32 that also weigh the hi
// plane by 256, minus the lanes' sums (the "− Σ x" term, exact), one convert, and one FMA with d_w times
// the eight lane steps (pq2_avx2_lanes.h).
#include "kernels/cpu/pq2_avx2_lanes.h"

namespace tern::kernels::cpu {

namespace {

// kReloadActivations: read the block's activations as memory operands of the multiplies, row after row.
// Decode tiles want it: left to itself, the compiler keeps the eight activation vectors in registers
// across the tile's rows and spills the rows' accumulators and sums to the stack instead (≈ 5 more
// loads and stores per row and block; in L2 the decode tile ran ≈ 1.1–1.15× slower, 12-02 on Zen 3).
// Prompt tiles do not: their tokens' activations are reused by two rows, and reloading them was slower.
template <bool kReloadActivations>
struct MaddubsDot {
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

}  // namespace

void pq2_rows_avx2(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end) {
  using PromptTiles = tiling::BlockTiles<Avx2Lanes<MaddubsDot<false>>>;
  using DecodeTiles = tiling::BlockTiles<Avx2Lanes<MaddubsDot<true>>>;
  tiling::rows<PromptTiles, 4, 2, 4, DecodeTiles>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
