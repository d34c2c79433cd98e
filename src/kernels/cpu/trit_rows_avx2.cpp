// AVX2 kernels for trit rows (trit_rows.h, quant/trit_rows.h): the decode tiles and the re-pack to PQ2_0.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/maddubs_dot_avx2.h"
#include "kernels/cpu/pq2_avx2_lanes.h"
#include "kernels/cpu/trit_rows.h"
#include "quant/trit_rows.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kBlocksPerUnit = 5;  // four sources: twenty code vectors
constexpr int64_t kUnitBytes = 4 * quant::kTritRowSourceBytes;
using Lanes = Avx2Lanes<MaddubsDot<true>>;

// The signed thresholds of a slot's codes (quant/trit_rows.h), opaque to the compiler: it otherwise
// rewrites a compare against a constant as a min and an equality, one more instruction a code vector.
struct Thresholds {
  __m256i low, high;
  Thresholds() : low(_mm256_set1_epi8(-43)), high(_mm256_set1_epi8(42)) { asm("" : "+x"(low), "+x"(high)); }
};

// The codes of the slot that signed bytes s hold: [s > −43] + [s > 42], as |−[s > −43]| − (−[s > 42]).
inline __m256i slot_codes(__m256i s, const Thresholds& t) {
  const __m256i above_low = _mm256_cmpgt_epi8(s, t.low);    // −1 or 0
  const __m256i above_high = _mm256_cmpgt_epi8(s, t.high);  // −1 or 0
  return _mm256_sub_epi8(_mm256_abs_epi8(above_low), above_high);
}

// The next slot's bytes: 3 · s mod 256.
inline __m256i next_slot(__m256i s) {
  return _mm256_add_epi8(_mm256_add_epi8(s, s), s);
}

// Code vectors V.. of a unit's sources (slot V % 5 of source V / 5, field V % 4 of block V / 4), s holding
// slot V − 1's bytes: visit(j, fields) after each block j's four. Inlined whole, so a tile's accumulators
// stay in registers.
template <int V, int kVectors, class Visit>
[[gnu::always_inline]] inline void unit_vectors(const uint8_t* sources, const Thresholds& t, __m256i s,
                                                __m256i (&fields)[4], Visit& visit) {
  if constexpr (V < kVectors) {
    if constexpr (V % quant::kTritRowSlots == 0) {
      s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sources + quant::kTritRowSourceBytes *
                                                                            (V / quant::kTritRowSlots)));
    } else {
      s = next_slot(s);
    }
    fields[V % 4] = slot_codes(s, t);
    if constexpr (V % 4 == 3) visit(V / 4, fields);
    unit_vectors<V + 1, kVectors>(sources, t, s, fields, visit);
  }
}

// visit(j, codes) for blocks j = 0..kBlocks − 1 of the unit whose sources start at `sources`, with codes
// the block's four code vectors (PQ2_0's fields 0..3). Reads only the sources those blocks use.
template <int kBlocks, class Visit>
[[gnu::always_inline]] inline void unit_blocks(const uint8_t* sources, const Thresholds& t, Visit&& visit) {
  __m256i fields[4];
  unit_vectors<0, 4 * kBlocks>(sources, t, _mm256_setzero_si256(), fields, visit);
}

// f(std::integral_constant<int, count>) for a unit's block count (1..5).
template <class F>
inline void with_block_count(int64_t count, F&& f) {
  switch (count) {
    case 1:
      f(std::integral_constant<int, 1>{});
      return;
    case 2:
      f(std::integral_constant<int, 2>{});
      return;
    case 3:
      f(std::integral_constant<int, 3>{});
      return;
    case 4:
      f(std::integral_constant<int, 4>{});
      return;
    default:
      f(std::integral_constant<int, 5>{});
      return;
  }
}

// The fp16 scales of a unit's kBlocks blocks as fp32: one convert for five blocks. Reads no byte past them,
// and a whole unit's with two loads straight from the row: bytes copied through a buffer first would stall
// the convert's load, which no single store could forward (≈ a fifth of the kernel's time, measured).
template <int kBlocks>
inline void unit_scales(const uint8_t* scales, float* d_w) {
  __m128i bits;
  if constexpr (kBlocks == kBlocksPerUnit) {
    uint16_t fifth;
    std::memcpy(&fifth, scales + 8, sizeof fifth);
    bits = _mm_insert_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)), fifth, 4);
  } else {
    alignas(16) uint16_t copy[8] = {};
    std::memcpy(copy, scales, 2 * kBlocks);
    bits = _mm_load_si128(reinterpret_cast<const __m128i*>(copy));
  }
  _mm256_store_ps(d_w, _mm256_cvtph_ps(bits));
  // Read back from memory: each block's broadcast is then a load, not a shuffle on the vector ports.
  asm volatile("" : "+m"(*reinterpret_cast<float(*)[8]>(d_w)));
}

template <int R, int T>
struct RowTile {
  const QuantizedActs& a;
  int64_t token;
  size_t scales;  // offset of a row's scales
  const uint8_t* rows[R];
  Thresholds thresholds;
  Lanes::Acc acc[R][T];

  RowTile(const TernaryMatrix& w, const QuantizedActs& acts, int64_t row, int64_t first_token)
      : a(acts), token(first_token), scales(quant::trit_rows_scale_offset(w.cols, 0)) {
    for (int r = 0; r < R; ++r) rows[r] = w.data + static_cast<size_t>(row + r) * w.row_bytes;
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) acc[r][t] = Lanes::zero();
  }

  // The kBlocks blocks of unit u of row r, for every token.
  template <int kBlocks>
  [[gnu::always_inline]] void unit(int r, int64_t u) {
    const int64_t first = kBlocksPerUnit * u;
    alignas(32) float d_w[8];
    unit_scales<kBlocks>(rows[r] + scales + 2 * first, d_w);
    unit_blocks<kBlocks>(rows[r] + u * kUnitBytes, thresholds, [&](int j, const __m256i(&fields)[4]) {
      const Lanes::Codes codes{{fields[0], fields[1], fields[2], fields[3]}, _mm256_broadcast_ss(d_w + j)};
      for (int t = 0; t < T; ++t) acc[r][t] = Lanes::step(acc[r][t], codes, a, token + t, first + j);
    });
  }

  void store(float* y, int64_t y_stride, int64_t row) const {
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < T; ++t) y[(token + t) * y_stride + row + r] = Lanes::sum(acc[r][t]);
  }
};

struct RowTiles {
  // R rows × T tokens, unit by unit (five blocks, four sources a row), in pq2_rows_avx2's lane order.
  template <int R, int T>
  static void tile(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row,
                   int64_t token) {
    RowTile<R, T> tile(w, a, row, token);
    const int64_t blocks = a.blocks();
    const int64_t full_units = blocks / kBlocksPerUnit;
    // As in tiling::tile: the next tile's rows are fetched at the pace this one is read.
    const uint8_t* next = tile.rows[0] + R * static_cast<int64_t>(w.row_bytes);
    const int64_t span_step = (R * static_cast<int64_t>(w.row_bytes) + full_units) / (full_units + 1);
    for (int64_t u = 0; u < full_units; ++u) {
      if constexpr (T == 1) {
        for (int64_t line = 0; line < span_step; line += 64)
          __builtin_prefetch(next + u * span_step + line, 0, 3);
      }
#pragma GCC unroll 4  // whole: acc[r] must stay in registers
      for (int r = 0; r < R; ++r) tile.template unit<kBlocksPerUnit>(r, u);
    }
    if (const int64_t tail = blocks - full_units * kBlocksPerUnit; tail > 0) {
      with_block_count(tail, [&](auto count) {
        for (int r = 0; r < R; ++r) tile.template unit<decltype(count)::value>(r, full_units);
      });
    }
    tile.store(y, y_stride, row);
  }
};

// PQ2_0's block from its four code vectors: qs byte i = c0[i] | c1[i] << 2 | c2[i] << 4 | c3[i] << 6
// (codes ≤ 2, so no shift carries into the next byte).
inline void store_pq2_block(const __m256i (&c)[4], const uint8_t* d_bits, uint8_t* block) {
  const __m256i c01 = _mm256_or_si256(c[0], _mm256_slli_epi16(c[1], 2));
  const __m256i c23 = _mm256_or_si256(_mm256_slli_epi16(c[2], 4), _mm256_slli_epi16(c[3], 6));
  std::memcpy(block, d_bits, 2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(block + 2), _mm256_or_si256(c01, c23));
}

}  // namespace

void trit_rows_avx2(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                    int64_t row_begin, int64_t row_end) {
  tiling::rows<RowTiles, 4, 2, 4>(y, y_stride, w, a, row_begin, row_end);
}

void trit_rows_to_pq2_avx2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
  const int64_t blocks = w.cols / kActBlock;
  const size_t scales = quant::trit_rows_scale_offset(w.cols, 0);
  const int64_t pq2_row = blocks * static_cast<int64_t>(kPq2BlockBytes);
  const Thresholds thresholds;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = w.data + static_cast<size_t>(r) * w.row_bytes;
    uint8_t* dst = out + (r - row_begin) * pq2_row;
    for (int64_t first = 0; first < blocks; first += kBlocksPerUnit) {
      with_block_count(std::min<int64_t>(kBlocksPerUnit, blocks - first), [&](auto count) {
        unit_blocks<decltype(count)::value>(
            row + first / kBlocksPerUnit * kUnitBytes, thresholds, [&](int j, const __m256i(&fields)[4]) {
              store_pq2_block(fields, row + scales + 2 * (first + j),
                              dst + (first + j) * static_cast<int64_t>(kPq2BlockBytes));
            });
      });
    }
  }
}

}  // namespace tern::kernels::cpu
