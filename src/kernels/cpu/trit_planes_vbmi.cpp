// The AVX-512 VBMI re-pack of trit planes (trit_planes.h, quant/trit_planes.h) to PQ2_0 rows.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/trit_lookups_vbmi.h"
#include "kernels/cpu/trit_planes.h"
#include "quant/trit_planes.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kBlocksPerUnit = 5;  // two sources: ten code vectors
constexpr int64_t kUnitSourceBytes = 2 * quant::kPlaneSourceBytes;

// The five code vectors of one 64-byte source.
inline void extract(const uint8_t* source, const TritTables& t, __m512i* vectors) {
  extract_bytes(_mm512_loadu_si512(source), t, vectors);
}

// The code vectors of the `count` blocks (≤ 5) of unit `unit` of a row: one source, or two where the
// blocks need more than five vectors.
inline void extract_unit(const uint8_t* row, int64_t unit, int64_t count, const TritTables& t,
                         __m512i* vectors) {
  const uint8_t* sources = row + unit * kUnitSourceBytes;
  extract(sources, t, vectors);
  if (2 * count > quant::kSlotsPerByte) extract(sources + quant::kPlaneSourceBytes, t, vectors + 5);
}

inline uint16_t load_scale(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

// PQ2_0's qs bytes of one block from its two code vectors: byte i = c0[i] | c1[i] << 2 | c2[i] << 4 |
// c3[i] << 6, with [c0|c1] and [c2|c3] the vectors.
inline void store_pq2_block(__m512i c01, __m512i c23, uint16_t d_bits, uint8_t* block) {
  const __m512i pairs = _mm512_or_si512(c01, _mm512_slli_epi16(c23, 4));  // [c0 | c2<<4 , c1 | c3<<4]
  const __m256i qs = _mm256_or_si256(_mm512_castsi512_si256(pairs),
                                     _mm256_slli_epi16(_mm512_extracti64x4_epi64(pairs, 1), 2));
  block[0] = static_cast<uint8_t>(d_bits & 0xffu);
  block[1] = static_cast<uint8_t>(d_bits >> 8);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(block + 2), qs);
}

}  // namespace

void trit_planes_to_pq2_vbmi(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
  const TritTables& tables = plane_tables();
  const int64_t blocks = w.cols / kActBlock;
  const int64_t scales = quant::trit_plane_sources(w.cols) * quant::kPlaneSourceBytes;
  const int64_t pq2_row = blocks * static_cast<int64_t>(kPq2BlockBytes);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + static_cast<size_t>(r) * w.row_bytes;
    uint8_t* dst = out + (r - row_begin) * pq2_row;
    for (int64_t first = 0; first < blocks; first += kBlocksPerUnit) {
      const int64_t count = std::min(kBlocksPerUnit, blocks - first);
      __m512i vectors[2 * kBlocksPerUnit];
      extract_unit(row, first / kBlocksPerUnit, count, tables, vectors);
      for (int64_t j = 0; j < count; ++j) {
        store_pq2_block(vectors[2 * j], vectors[2 * j + 1], load_scale(row + scales + 2 * (first + j)),
                        dst + (first + j) * static_cast<int64_t>(kPq2BlockBytes));
      }
    }
  }
}

}  // namespace tern::kernels::cpu
