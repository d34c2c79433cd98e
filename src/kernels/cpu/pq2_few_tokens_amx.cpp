// AMX-INT8 PQ2_0 kernel for a few prompt tokens at a time (pq2_matmul.h, group order). The chunk kernel
// (pq2_matmul_amx.cpp) pays for a 16-token tile however few tokens are real; this one puts up to four
// tokens in one tile's rows and re-lays the weights out for every group of four.
//
// The weights are the B operand, straight from the file's PQ2_0 rows: per 16-row panel and block, the
// sixteen 32-byte qs vectors are transposed by dwords in registers (X_i = dword i of each row, row n in
// column n), and GF2P8AFFINEQB takes each 2-bit field of X_i to one B row. B tile t (K = 64) holds
// i = 4t..4t+3, so its row r = 4(i − 4t) + s, byte m of column n, is the code of row n's element
// 16i + 4m + s.
//
// The activations are the A operand: per token four rows over the same 64 values, {hi, lo} × {first scale
// group of the half, second}, each zero outside its group, so one TDPBSUD (signed digits × unsigned
// codes) gives per row and token the exact Σ code·digit of every (group, digit). With S_g = Σ (256·hi + lo)
// over the group, D_g = 256·hi_dot + lo_dot − S_g is the integer the group order scales and sums, in the
// same fp32 order: the results equal pq2_rows_avx512_groups' and pq2_rows_amx's bit for bit.
//
// Measured (docs/performance.md): two TDPBSUD per panel and block cost about what the VNNI lane kernel
// spends on a whole block, so for one decode token this is no faster than pq2_rows_avx512_lanes; it
// pays from two tokens on, where the tile's idle rows take the extra tokens for free.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/panel_gather.h"
#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

namespace {

// A panel (kPanelRows, panel_gather.h) is the columns of a B tile and of the dot tiles.
constexpr int kTileK = 64;        // values per TDPBSUD: two scale groups
constexpr int kMaxTokens = 4;     // tokens per A tile
constexpr int kRowsPerToken = 4;  // {hi, lo} × {first group, second group}
constexpr int kGroups = static_cast<int>(kActBlock / kActGroup);
constexpr int64_t kBBlockBytes = 2 * kPanelRows * kTileK;  // a block's two B tiles
constexpr int kRing = 4;                                   // B tiles and dots in flight
constexpr int kLead = 2;                                   // blocks laid out ahead of the products

int64_t a_tile_bytes(int tokens) {
  return int64_t{tokens} * kRowsPerToken * kTileK;
}

// Tiles: 0, 1 the A tiles of a block's two halves; 2, 3 their B tiles; 4, 5 their dots.
amx::TileConfig tile_config(int tokens) {
  amx::TileConfig config;
  const int rows = tokens * kRowsPerToken;
  for (int a = 0; a < 2; ++a) config.set(a, rows, kTileK);
  for (int b = 2; b < 4; ++b) config.set(b, kPanelRows, kTileK);
  for (int dots = 4; dots < 6; ++dots) config.set(dots, rows, kPanelRows * 4);
  return config;
}

struct ThreadScratch {
  GrowBuffer<int8_t> acts;   // [token group][block][half][token][4 rows][64]
  GrowBuffer<float> steps;   // [token][block][group]
  GrowBuffer<int32_t> sums;  // [token][block][group]: S_g
};

// The A tiles of tokens [first, first + tokens) (at most four), and every token's steps and S_g.
void build_acts(const QuantizedActs& a, int64_t first, int tokens, int8_t* acts, float* steps,
                int32_t* sums) {
  // A's value k of half t is byte 32·((k/4)%4) + 16t + 4·(k/16) + k%4 of a digit plane.
  alignas(64) uint8_t order[2][kTileK];
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < kTileK; ++k)
      order[t][k] = static_cast<uint8_t>(32 * ((k / 4) % 4) + 16 * t + 4 * (k / 16) + k % 4);
  const __m512i orders[2] = {_mm512_load_si512(order[0]), _mm512_load_si512(order[1])};
  constexpr __mmask64 kFirstGroup = 0x00000000FFFFFFFFull, kSecondGroup = ~kFirstGroup;
  const int64_t blocks = a.blocks(), tile_bytes = a_tile_bytes(tokens);
  for (int j = 0; j < tokens; ++j) {
    const int64_t token = first + j;
    const int8_t* q = a.token_q(token);
    const float* scales = a.token_zmm_scales(token);
    const int32_t* lane_sums = a.token_zmm_sums(token);
    for (int64_t b = 0; b < blocks; ++b) {
      const int8_t* hi = q + b * kActBlockBytes;
      const int8_t* lo = hi + kActBlock;
      const __m512i planes[2][2] = {{_mm512_loadu_si512(hi), _mm512_loadu_si512(hi + 64)},
                                    {_mm512_loadu_si512(lo), _mm512_loadu_si512(lo + 64)}};
      for (int t = 0; t < 2; ++t) {
        int8_t* rows = acts + (2 * b + t) * tile_bytes + j * kRowsPerToken * kTileK;
        for (int digit = 0; digit < 2; ++digit) {
          const __m512i& lower = planes[digit][0];
          const __m512i& upper = planes[digit][1];
          _mm512_store_si512(rows + digit * kTileK,
                             _mm512_maskz_permutex2var_epi8(kFirstGroup, lower, orders[t], upper));
          _mm512_store_si512(rows + (2 + digit) * kTileK,
                             _mm512_maskz_permutex2var_epi8(kSecondGroup, lower, orders[t], upper));
        }
      }
      // zmm lanes 2g, 2g + 1, 2g + 8 and 2g + 9 cover group g; their sums are −Σ hi, then Σ lo.
      const int32_t* neg_hi_sums = lane_sums + b * kZmmSums;
      const int32_t* lo_sums = neg_hi_sums + kZmmLanes;
      for (int g = 0; g < kGroups; ++g) {
        int32_t hi_sum = 0, lo_sum = 0;
        for (int lane : {2 * g, 2 * g + 1, 2 * g + 8, 2 * g + 9}) {
          hi_sum -= neg_hi_sums[lane];
          lo_sum += lo_sums[lane];
        }
        const int64_t at = (token * blocks + b) * kGroups + g;
        sums[at] = 256 * hi_sum + lo_sum;
        steps[at] = scales[b * kZmmLanes + 2 * g];
      }
    }
  }
}

// One block of a 16-row panel (qs at rows[n] + offset) as its two B tiles.
inline void write_b_tiles(const uint8_t* const rows[kPanelRows], int64_t offset, int8_t* b_tiles) {
  __m512i z[8];  // rows p and p + 8
  for (int p = 0; p < 8; ++p) {
    const __m256i lower = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[p] + offset));
    const __m256i upper = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[p + 8] + offset));
    z[p] = _mm512_inserti64x4(_mm512_castsi256_si512(lower), upper, 1);
  }
  // An 8 × 8 dword transpose in each 256-bit half.
  __m512i t[8], u[8];
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = _mm512_unpacklo_epi32(z[2 * p], z[2 * p + 1]);
    t[2 * p + 1] = _mm512_unpackhi_epi32(z[2 * p], z[2 * p + 1]);
  }
  for (int h = 0; h < 2; ++h) {
    const __m512i* s = t + 4 * h;
    u[4 * h + 0] = _mm512_unpacklo_epi64(s[0], s[2]);  // dwords 0 | 4 of rows 4h..4h+3
    u[4 * h + 1] = _mm512_unpackhi_epi64(s[0], s[2]);  // 1 | 5
    u[4 * h + 2] = _mm512_unpacklo_epi64(s[1], s[3]);  // 2 | 6
    u[4 * h + 3] = _mm512_unpackhi_epi64(s[1], s[3]);  // 3 | 7
  }
  const __m512i low_lanes = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i high_lanes = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  // GF2P8AFFINEQB with matrix rows 7 and 6 = bits 2s and 2s + 1 moves a byte's field s to its low bits.
  __m512i field[4];
  for (int s = 0; s < 4; ++s)
    field[s] = _mm512_set1_epi64(
        static_cast<long long>((uint64_t{1} << (2 * s)) << 56 | (uint64_t{2} << (2 * s)) << 48));
  for (int d = 0; d < 4; ++d) {
    const __m512i xs[2] = {_mm512_permutex2var_epi64(u[d], low_lanes, u[4 + d]),    // X_d
                           _mm512_permutex2var_epi64(u[d], high_lanes, u[4 + d])};  // X_{d+4}
    for (int half = 0; half < 2; ++half) {
      const int i = d + 4 * half;
      int8_t* out = b_tiles + (i / 4) * kPanelRows * kTileK + (i % 4) * 4 * kTileK;
      for (int s = 0; s < 4; ++s)
        _mm512_store_si512(out + s * kTileK, _mm512_gf2p8affine_epi64_epi8(xs[half], field[s], 0));
    }
  }
}

struct Panel {
  const uint8_t* rows[kPanelRows];  // a short panel repeats its last row
  __m512i scale_offsets;            // of each row's block from rows[0]
  int valid;
};

Panel panel_at(const TernaryMatrix& w, int64_t row, int valid) {
  Panel p;
  alignas(64) int32_t offsets[kPanelRows];
  for (int n = 0; n < kPanelRows; ++n) {
    const int64_t r = std::min(n, valid - 1);
    p.rows[n] = w.data + static_cast<size_t>(row + r) * w.row_bytes;
    offsets[n] = static_cast<int32_t>(r * static_cast<int64_t>(w.row_bytes));
  }
  p.scale_offsets = _mm512_load_si512(offsets);
  p.valid = valid;
  return p;
}

// y for one panel and kTokens tokens from `token`, whose A tiles are at `acts`.
template <int kTokens>
void panel_tokens(float* y, int64_t y_stride, int64_t blocks, const Panel& panel, int64_t row,
                  const int8_t* acts, const float* steps, const int32_t* sums, int64_t token) {
  constexpr int64_t kATileBytes = int64_t{kTokens} * kRowsPerToken * kTileK;
  alignas(64) int8_t b_tiles[kRing][kBBlockBytes];
  alignas(64) int32_t dots[kRing][2][kTokens * kRowsPerToken][kPanelRows];  // [block][half][A row]
  __m512 acc[kTokens];
  for (int j = 0; j < kTokens; ++j) acc[j] = _mm512_setzero_ps();
  const auto qs_offset = [](int64_t b) { return b * static_cast<int64_t>(kPq2BlockBytes) + 2; };
  const auto combine = [&](int64_t b) {
    const __m512i scale_bits =
        _mm512_i32gather_epi32(panel.scale_offsets, panel.rows[0] + qs_offset(b) - 2, 1);
    const __m512 d_w = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(scale_bits));
    for (int j = 0; j < kTokens; ++j) {
      const int64_t at = ((token + j) * blocks + b) * kGroups;
      __m512 scaled[kGroups];
      for (int g = 0; g < kGroups; ++g) {
        const int32_t* hi = dots[b % kRing][g / 2][j * kRowsPerToken + 2 * (g % 2)];
        const __m512i dot = _mm512_sub_epi32(
            _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(hi), 8), _mm512_load_si512(hi + kPanelRows)),
            _mm512_set1_epi32(sums[at + g]));
        scaled[g] = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(steps[at + g]));
      }
      const __m512 block_sum =
          _mm512_add_ps(_mm512_add_ps(scaled[0], scaled[1]), _mm512_add_ps(scaled[2], scaled[3]));
      acc[j] = _mm512_fmadd_ps(block_sum, d_w, acc[j]);
    }
  };
  for (int64_t b = 0; b < std::min<int64_t>(kLead, blocks); ++b)
    write_b_tiles(panel.rows, qs_offset(b), b_tiles[b]);
  for (int64_t b = 0; b < blocks; ++b) {
    if (b + kLead < blocks) write_b_tiles(panel.rows, qs_offset(b + kLead), b_tiles[(b + kLead) % kRing]);
    const int8_t* a_block = acts + 2 * b * kATileBytes;
    const int8_t* b_block = b_tiles[b % kRing];
    _tile_loadd(0, a_block, kTileK);
    _tile_loadd(1, a_block + kATileBytes, kTileK);
    _tile_loadd(2, b_block, kTileK);
    _tile_loadd(3, b_block + kPanelRows * kTileK, kTileK);
    _tile_zero(4);
    _tile_zero(5);
    _tile_dpbsud(4, 0, 2);
    _tile_dpbsud(5, 1, 3);
    _tile_stored(4, dots[b % kRing][0], kPanelRows * 4);
    _tile_stored(5, dots[b % kRing][1], kPanelRows * 4);
    if (b >= 1) combine(b - 1);
  }
  combine(blocks - 1);
  const __mmask16 written = static_cast<__mmask16>((1u << panel.valid) - 1u);
  for (int j = 0; j < kTokens; ++j) _mm512_mask_storeu_ps(y + (token + j) * y_stride + row, written, acc[j]);
}

using PanelTokens = void (*)(float*, int64_t, int64_t, const Panel&, int64_t, const int8_t*, const float*,
                             const int32_t*, int64_t);
constexpr PanelTokens kPanelTokens[kMaxTokens] = {panel_tokens<1>, panel_tokens<2>, panel_tokens<3>,
                                                  panel_tokens<4>};

}  // namespace

void pq2_rows_amx_few(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end) {
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t token_groups = (a.n_tokens + kMaxTokens - 1) / kMaxTokens;
  const int64_t group_bytes = 2 * blocks * a_tile_bytes(kMaxTokens);
  int8_t* acts = scratch.acts.at_least(static_cast<size_t>(token_groups * group_bytes));
  float* steps = scratch.steps.at_least(static_cast<size_t>(a.n_tokens * blocks * kGroups));
  int32_t* sums = scratch.sums.at_least(static_cast<size_t>(a.n_tokens * blocks * kGroups));
  const auto group_tokens = [&](int64_t group) {
    return static_cast<int>(std::min<int64_t>(kMaxTokens, a.n_tokens - group * kMaxTokens));
  };
  for (int64_t group = 0; group < token_groups; ++group)
    build_acts(a, group * kMaxTokens, group_tokens(group), acts + group * group_bytes, steps, sums);

  // Panels outside, token groups inside: a panel's rows are read from memory once for all tokens.
  int configured = 0;
  for (int64_t row = row_begin; row < row_end; row += kPanelRows) {
    const Panel panel = panel_at(w, row, static_cast<int>(std::min<int64_t>(kPanelRows, row_end - row)));
    for (int64_t group = 0; group < token_groups; ++group) {
      const int tokens = group_tokens(group);
      if (tokens != configured) {
        if (configured != 0) _tile_release();
        const amx::TileConfig config = tile_config(tokens);
        _tile_loadconfig(&config);
        configured = tokens;
      }
      kPanelTokens[tokens - 1](y, y_stride, blocks, panel, row, acts + group * group_bytes, steps, sums,
                               group * kMaxTokens);
    }
  }
  _tile_release();
}

}  // namespace tern::kernels::cpu
