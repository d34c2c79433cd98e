// AVX-512 VBMI + VNNI kernels for trit planes (trit_planes.h, quant/trit_planes.h): the decode kernel and
// the fast re-pack to PQ2_0.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <type_traits>

#include "kernels/cpu/pq2_pairs_avx512.h"
#include "kernels/cpu/pq2_tile.h"
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

// The five code vectors of two rows' sources as [row A | row B] halves. A byte's trits depend on that
// byte only, so extracting [A bytes 0..31 | B bytes 0..31] gives each code vector's first field (2h) of
// both rows, and the bytes 32..63 its second (2h + 1): the pair order's operands with no shuffle.
inline void extract_pair(const uint8_t* source_a, const uint8_t* source_b, const TritTables& t,
                         __m512i* first, __m512i* second) {
  const auto join = [](const uint8_t* a, const uint8_t* b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a))),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)), 1);
  };
  extract_bytes(join(source_a, source_b), t, first);
  extract_bytes(join(source_a + 32, source_b + 32), t, second);
}

// The code vectors of the `count` blocks (≤ 5) of unit `unit` of a row: one source, or two where the
// blocks need more than five vectors.
inline void extract_unit(const uint8_t* row, int64_t unit, int64_t count, const TritTables& t,
                         __m512i* vectors) {
  const uint8_t* sources = row + unit * kUnitSourceBytes;
  extract(sources, t, vectors);
  if (2 * count > quant::kSlotsPerByte) extract(sources + quant::kPlaneSourceBytes, t, vectors + 5);
}

// The fp16 scales of a unit's `count` blocks as fp32: one convert for five blocks, where the PQ2_0 kernels
// convert each block's own. Reads no byte past the unit's scales.
inline void unit_scales(const uint8_t* scales, int64_t count, float* d_w) {
  const __m128i bits = _mm_maskz_loadu_epi16(static_cast<__mmask8>((1u << count) - 1u), scales);
  _mm256_store_ps(d_w, _mm256_cvtph_ps(bits));
  // Read back from memory: each block's broadcast is then a load, not shuffles on the vector ports.
  asm volatile("" : "+m"(*reinterpret_cast<float(*)[8]>(d_w)));
}

inline uint16_t load_scale(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

struct PlaneTiles {
  // R rows (a lone row is paired with itself) × T tokens, unit by unit (five blocks, two sources a row),
  // in the AVX2 lane order of avx512::pair_step.
  template <int R, int T>
  static void tile(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row,
                   int64_t token) {
    constexpr int kPairs = avx512::PairTile<R, T>::kPairs;
    const TritTables& tables = plane_tables();
    const int64_t blocks = a.blocks();
    const int64_t scales = quant::trit_plane_sources(w.cols) * quant::kPlaneSourceBytes;
    avx512::PairTile<R, T> tile(w, a, row, token);
    const auto& rows = tile.rows;

    // Block j of pair p from its two code vectors (v = 2j, 2j + 1), each as [A | B] first and second fields.
    const auto step = [&](int p, __m512i f0, __m512i f1, __m512i f2, __m512i f3, const float* da,
                          const float* db, int64_t first, int64_t j) {
      const avx512::PairCodes codes{{f0, f1, f2, f3},
                                    _mm512_mask_mov_ps(_mm512_set1_ps(da[j]), 0xFF00, _mm512_set1_ps(db[j]))};
      for (int t = 0; t < T; ++t) tile.acc[p][t] = tile.acts[t].step(tile.acc[p][t], codes, first + j);
    };
    // The `count` blocks (≤ 5) of one unit of pair p, source by source.
    const auto unit_steps = [&](int p, int64_t unit, auto count) {
      const int64_t first = unit * kBlocksPerUnit;
      const uint8_t* source_a = rows[2 * p] + unit * kUnitSourceBytes;
      const uint8_t* source_b = rows[2 * p + 1] + unit * kUnitSourceBytes;
      alignas(32) float da[8], db[8];
      unit_scales(rows[2 * p] + scales + 2 * first, count, da);
      unit_scales(rows[2 * p + 1] + scales + 2 * first, count, db);
      __m512i first_fields[5], second_fields[5];  // first and second fields of code vectors 0..4, then 5..9
      extract_pair(source_a, source_b, tables, first_fields, second_fields);
      step(p, first_fields[0], second_fields[0], first_fields[1], second_fields[1], da, db, first, 0);
      if (count > 1)
        step(p, first_fields[2], second_fields[2], first_fields[3], second_fields[3], da, db, first, 1);
      if (count > 2) {
        const __m512i first4 = first_fields[4], second4 = second_fields[4];
        extract_pair(source_a + quant::kPlaneSourceBytes, source_b + quant::kPlaneSourceBytes, tables,
                     first_fields, second_fields);
        step(p, first4, second4, first_fields[0], second_fields[0], da, db, first, 2);
        if (count > 3)
          step(p, first_fields[1], second_fields[1], first_fields[2], second_fields[2], da, db, first, 3);
        if (count > 4)
          step(p, first_fields[3], second_fields[3], first_fields[4], second_fields[4], da, db, first, 4);
      }
    };
    // As in tiling::tile: the next tile's rows are fetched at the pace this one is read.
    const int64_t full_units = blocks / kBlocksPerUnit;
    const uint8_t* next = rows[0] + R * static_cast<int64_t>(w.row_bytes);
    const int64_t span_step = (R * static_cast<int64_t>(w.row_bytes) + full_units) / (full_units + 1);
    for (int64_t unit = 0; unit < full_units; ++unit) {
      if constexpr (T == 1) {
        for (int64_t line = 0; line < span_step; line += 64)
          __builtin_prefetch(next + unit * span_step + line, 0, 3);
      }
#pragma GCC unroll 2  // whole: acc[p] must stay in registers
      for (int p = 0; p < kPairs; ++p) unit_steps(p, unit, std::integral_constant<int64_t, kBlocksPerUnit>{});
    }
    if (full_units * kBlocksPerUnit < blocks) {  // the row's tail
      for (int p = 0; p < kPairs; ++p) unit_steps(p, full_units, blocks - full_units * kBlocksPerUnit);
    }
    tile.store(y, y_stride, row, token);
  }
};

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

void trit_planes_rows_pairs(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                            int64_t row_begin, int64_t row_end) {
  tiling::rows<PlaneTiles, 4, 4, 4>(y, y_stride, w, a, row_begin, row_end);
}

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
