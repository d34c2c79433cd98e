// AVX-512 VBMI + VNNI + GFNI PQ2_0 kernel in the AVX2 lane order, the decode kernel where VBMI exists
// (pq2_matmul.h). A zmm holds one 2-bit field of two rows, [row A | row B], so a row's eight lanes are
// the AVX2 kernel's eight (lane l: qs bytes 4l..4l+3 of every field) and every step is that kernel's:
// the same exact integer per lane and block, the same fp32 convert, multiply and FMA, the same eight-lane
// sum at the end. The results equal pq2_rows_avx2's bit for bit.
//
// Why: the 16-lane kernel spends about nine port-0 instructions per row and block (four VPDPBUSD, two
// variable shifts, the digit shift, two converts), and port 0 is the only one that runs 512-bit shifts,
// converts and dot products. Here fields 0..2 come from VPERMB lookups (port 5) of the two rows' qs, and
// the shift, the converts and the scale build are paid once per pair of rows.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/pq2_pairs_avx512.h"
#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu {

namespace {

// Lookup tables by the low six bits of a qs byte: fields 0, 1 and 2. Field 3 (the top two bits) takes
// one GF2P8AFFINEQB whose matrix rows 7 and 6 pick bits 6 and 7, where a shift and a mask took two
// instructions, one of them on port 0 with the dot products.
struct FieldTables {
  __m512i field[3];
  __m512i field3_matrix =
      _mm512_set1_epi64(static_cast<long long>(uint64_t{0x40} << 56 | uint64_t{0x80} << 48));
  FieldTables() {
    alignas(64) uint8_t bytes[3][64];
    for (int s = 0; s < 3; ++s)
      for (int i = 0; i < 64; ++i) bytes[s][i] = static_cast<uint8_t>((i >> (2 * s)) & 3);
    for (int s = 0; s < 3; ++s) field[s] = _mm512_load_si512(bytes[s]);
  }
};

inline uint16_t scale_bits(const uint8_t* block) {
  uint16_t bits;
  std::memcpy(&bits, block, sizeof bits);
  return bits;
}

inline avx512::PairCodes unpack_pair(const FieldTables& tables, const uint8_t* block_a,
                                     const uint8_t* block_b) {
  const __m512i qs = _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block_a + 2))),
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block_b + 2)), 1);
  // [d_A × 8 | d_B × 8]: a broadcast and a masked one.
  const __m256i d = _mm256_mask_set1_epi16(_mm256_set1_epi16(static_cast<short>(scale_bits(block_a))), 0xFF00,
                                           static_cast<short>(scale_bits(block_b)));
  return avx512::PairCodes{
      {_mm512_permutexvar_epi8(qs, tables.field[0]), _mm512_permutexvar_epi8(qs, tables.field[1]),
       _mm512_permutexvar_epi8(qs, tables.field[2]),
       _mm512_gf2p8affine_epi64_epi8(qs, tables.field3_matrix, 0)},
      _mm512_cvtph_ps(d)};
}

struct PairTiles {
  // R rows (a lone row is paired with itself) × T tokens.
  template <int R, int T>
  static void tile(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row,
                   int64_t token) {
    static const FieldTables tables;
    avx512::PairTile<R, T> tile(w, a, row, token);
    const int64_t blocks = a.blocks();
    const uint8_t* next = tile.rows[0] + R * static_cast<int64_t>(w.row_bytes);
    constexpr int64_t kSpanStep = R * static_cast<int64_t>(kPq2BlockBytes);
    for (int64_t b = 0; b < blocks; ++b) {
      if constexpr (T == 1) {
        for (int64_t line = 0; line < kSpanStep; line += 64)
          __builtin_prefetch(next + b * kSpanStep + line, 0, 3);
      }
      const int64_t offset = b * static_cast<int64_t>(kPq2BlockBytes);
      for (int p = 0; p < tile.kPairs; ++p) {
        const avx512::PairCodes codes =
            unpack_pair(tables, tile.rows[2 * p] + offset, tile.rows[2 * p + 1] + offset);
        for (int t = 0; t < T; ++t) tile.acc[p][t] = tile.acts[t].step(tile.acc[p][t], codes, b);
      }
    }
    tile.store(y, y_stride, row, token);
  }
};

}  // namespace

void pq2_rows_avx512_pairs(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                           int64_t row_begin, int64_t row_end) {
  tiling::rows<PairTiles, 4, 4, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
