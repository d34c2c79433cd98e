// AVX-512 VNNI PQ2_0 kernel in group order, the prompt kernel where AMX exists (pq2_matmul.h). Per
// 128-weight block, row and token: sixteen exact lane dots (pq2_avx512.h).
//
// The lane dots of four rows (one "quad") are then summed into the exact dot of each 32-value scale group
// and scaled in the order the AMX kernel uses (pq2_matmul.h, "group order"), one 128-bit lane per row, so
// that a token's outputs are bit-identical whichever of the two kernels a matmul dispatches to.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/pq2_avx512.h"
#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu {

namespace {

using avx512::Codes;
using avx512::lane_dots;
using avx512::unpack;

constexpr int kQuad = 4;  // rows combined per vector: one 128-bit lane (four scale groups) each
constexpr int kPrefillTokens = 4;

// The permutations that sum four rows' lane dots into lane 4r + g = the dot of row r's group g (group g
// is zmm lanes 2g, 2g + 1, 2g + 8, 2g + 9).
struct QuadPerms {
  __m512i low_halves, high_halves;  // [row a lanes 0..7 | row b lanes 0..7], and lanes 8..15
  __m512i even, odd;                // lane 4p + g from lane 2g (or 2g + 1) of row p's 8-lane half
  __m512i step_of_group;            // lane 4p + g from zmm scale lane 2g
  __m256i row_of_lane;              // 16-bit lane 4p + g from lane p

  QuadPerms() {
    alignas(64) int32_t lo[16], hi[16], ev[16], od[16], st[16];
    alignas(32) int16_t row[16];
    for (int l = 0; l < 16; ++l) {
      lo[l] = l < 8 ? l : 16 + (l - 8);
      hi[l] = lo[l] + 8;
      const int p = l / 4, g = l % 4;
      ev[l] = (p / 2) * 16 + (p % 2) * 8 + 2 * g;
      od[l] = ev[l] + 1;
      st[l] = 2 * g;
      row[l] = static_cast<int16_t>(p);
    }
    low_halves = _mm512_load_si512(lo);
    high_halves = _mm512_load_si512(hi);
    even = _mm512_load_si512(ev);
    odd = _mm512_load_si512(od);
    step_of_group = _mm512_load_si512(st);
    row_of_lane = _mm256_load_si256(reinterpret_cast<const __m256i*>(row));
  }
};

__m512i group_dots(const QuadPerms& perms, const __m512i dots[kQuad]) {
  const __m512i rows01 = _mm512_add_epi32(_mm512_permutex2var_epi32(dots[0], perms.low_halves, dots[1]),
                                          _mm512_permutex2var_epi32(dots[0], perms.high_halves, dots[1]));
  const __m512i rows23 = _mm512_add_epi32(_mm512_permutex2var_epi32(dots[2], perms.low_halves, dots[3]),
                                          _mm512_permutex2var_epi32(dots[2], perms.high_halves, dots[3]));
  return _mm512_add_epi32(_mm512_permutex2var_epi32(rows01, perms.even, rows23),
                          _mm512_permutex2var_epi32(rows01, perms.odd, rows23));
}

// acc + d_w · ((P0 + P1) + (P2 + P3)) per 128-bit lane, P_g = group dot g × its step: lane 4r of the
// result holds row r's running sum.
__m512 scale_groups(__m512 acc, __m512i groups, __m512 steps, __m512 d_w) {
  const __m512 p = _mm512_mul_ps(_mm512_cvtepi32_ps(groups), steps);
  const __m512 pairs = _mm512_add_ps(p, _mm512_permute_ps(p, 0xB1));
  const __m512 block = _mm512_add_ps(pairs, _mm512_permute_ps(pairs, 0x4E));
  return _mm512_fmadd_ps(block, d_w, acc);
}

// Rows [row, row + valid) (valid ≤ 4; a short quad repeats its last row) × tokens [token, token + T).
template <int T>
void quad_tile(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
               const QuadPerms& perms, int64_t row, int valid, int64_t token) {
  const int64_t blocks = a.blocks();
  const uint8_t* rows[kQuad];
  for (int r = 0; r < kQuad; ++r)
    rows[r] = w.data + static_cast<size_t>(row + std::min(r, valid - 1)) * w.row_bytes;
  __m512 acc[T];
  for (__m512& v : acc) v = _mm512_setzero_ps();
  // As pq2_tile.h: in decode the next quad's span is fetched at the same pace.
  const uint8_t* next = w.data + static_cast<size_t>(row + kQuad) * w.row_bytes;
  constexpr int64_t kSpanStep = kQuad * static_cast<int64_t>(kPq2BlockBytes);
  const bool prefetch = T == 1 && row + 2 * kQuad <= w.rows;
  for (int64_t b = 0; b < blocks; ++b) {
    if (prefetch) {
      for (int64_t line = 0; line < kSpanStep; line += 64)
        __builtin_prefetch(next + b * kSpanStep + line, 0, 3);
    }
    Codes codes[kQuad];
    alignas(8) uint16_t d_bits[kQuad];
    for (int r = 0; r < kQuad; ++r) {
      const uint8_t* block = rows[r] + b * static_cast<int64_t>(kPq2BlockBytes);
      codes[r] = unpack(block);
      std::memcpy(&d_bits[r], block, sizeof(uint16_t));
    }
    // Lanes 4r..4r+3: row r's scale.
    const __m128i bits = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(d_bits));
    const __m512 d_w =
        _mm512_cvtph_ps(_mm256_permutexvar_epi16(perms.row_of_lane, _mm256_zextsi128_si256(bits)));
    for (int t = 0; t < T; ++t) {
      const int8_t* q = a.token_q(token + t) + b * kActBlockBytes;
      const int32_t* sums = a.token_zmm_sums(token + t) + b * kZmmSums;
      __m512i dots[kQuad];
      for (int r = 0; r < kQuad; ++r) dots[r] = lane_dots(codes[r], q, sums);
      const __m512 steps = _mm512_permutexvar_ps(
          perms.step_of_group, _mm512_load_ps(a.token_zmm_scales(token + t) + b * kZmmLanes));
      acc[t] = scale_groups(acc[t], group_dots(perms, dots), steps, d_w);
    }
  }
  for (int t = 0; t < T; ++t) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[t]);
    for (int r = 0; r < valid; ++r) y[(token + t) * y_stride + row + r] = lanes[4 * r];
  }
}

void sweep(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, const QuadPerms& perms,
           int64_t row_begin, int64_t row_end, int64_t token_begin, int64_t token_end) {
  for (int64_t row = row_begin; row < row_end; row += kQuad) {
    const int valid = static_cast<int>(std::min<int64_t>(kQuad, row_end - row));
    int64_t t = token_begin;
    for (; t + kPrefillTokens <= token_end; t += kPrefillTokens)
      quad_tile<kPrefillTokens>(y, y_stride, w, a, perms, row, valid, t);
    for (; t < token_end; ++t) quad_tile<1>(y, y_stride, w, a, perms, row, valid, t);
  }
}

}  // namespace

void pq2_rows_avx512_groups(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                            int64_t row_begin, int64_t row_end) {
  static const QuadPerms perms;
  if (a.n_tokens == 1) {
    sweep(y, y_stride, w, a, perms, row_begin, row_end, 0, 1);
    return;
  }
  // Tokens in chunks whose activations stay in L2 while the chunk sweeps the rows.
  const int64_t chunk = prompt_chunk_tokens(a.blocks() * kActBlockBytes, kPrefillTokens);
  for (int64_t t = 0; t < a.n_tokens; t += chunk)
    sweep(y, y_stride, w, a, perms, row_begin, row_end, t, std::min(a.n_tokens, t + chunk));
}

}  // namespace tern::kernels::cpu
