// AMX-INT8 PQ2_0 kernel for a few prompt tokens at a time (pq2_matmul.h, group order). The chunk kernel
// (pq2_matmul_amx.cpp) pays for a 16-token tile however few tokens are real; this one puts up to eight
// tokens in one tile's rows and re-lays the weights out for every group of eight.
//
// The weights are the B operand, straight from PQ2_0 rows or PQ2_0 panels: per 16-row panel and block,
// X_i = dword i of each row (row n in column n) is a stored panel vector, or, from rows, the sixteen
// 32-byte qs vectors transposed by dwords in registers, and GF2P8AFFINEQB takes each 2-bit field of X_i
// to one B row. B tile t (K = 64) holds
// i = 4t..4t+3, so its row r = 4(i − 4t) + s, byte m of column n, is the code of row n's element
// 16i + 4m + s.
//
// The activations are the A operand, with block steps (act_quant.h: prompt tokens): per token two rows,
// its hi and lo digits of a half block, and both halves' TDPBSUDs (signed digits × unsigned codes) add
// into one dot tile, so a row and token get the exact Σ code·digit of the block per digit. With S = Σ
// (256·hi + lo) over the block, D = 256·hi_dot + lo_dot − S is the block's integer, and fma(D·s, d_w, acc)
// is the group order's line exactly (the four groups share the power-of-two step s): the results equal
// pq2_rows_avx512_groups' and pq2_rows_amx's bit for bit. Activations with group steps go to the group
// kernel itself.
//
// Measured (docs/performance.md): two TDPBSUD per panel and block cost about what the VNNI lane kernel
// spends on a whole block, so for one token this is no faster than pq2_rows_avx512_lanes; it pays from
// two tokens on, where the tile's idle rows take the extra tokens for free.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/panel_gather.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "quant/pq2_panels.h"

namespace tern::kernels::cpu {

namespace {

// A panel (kPanelRows, panel_gather.h) is the columns of a B tile and of the dot tiles.
constexpr int kTileK = 64;                                 // values per TDPBSUD: half a block
constexpr int kMaxTokens = 8;                              // tokens per A tile
constexpr int kRowsPerToken = 2;                           // hi, lo
constexpr int64_t kBBlockBytes = 2 * kPanelRows * kTileK;  // a block's two B tiles
constexpr int kRing = 4;                                   // B tiles and dots in flight
constexpr int kLead = 2;                                   // blocks laid out ahead of the products

int64_t a_tile_bytes(int tokens) {
  return int64_t{tokens} * kRowsPerToken * kTileK;
}

// Tiles: 0, 1 the A tiles of a block's two halves; 2, 3 their B tiles; 4 the block's dots.
amx::TileConfig tile_config(int tokens) {
  amx::TileConfig config;
  const int rows = tokens * kRowsPerToken;
  for (int a = 0; a < 2; ++a) config.set(a, rows, kTileK);
  for (int b = 2; b < 4; ++b) config.set(b, kPanelRows, kTileK);
  config.set(4, rows, kPanelRows * 4);
  return config;
}

struct ThreadScratch {
  GrowBuffer<int8_t> acts;   // [token group][block][half][token][hi, lo][64]
  GrowBuffer<float> steps;   // [token][block]
  GrowBuffer<int32_t> sums;  // [token][block]: S
};

// The A tiles of tokens [first, first + tokens) (at most eight), and every token's steps and S.
void build_acts(const QuantizedActs& a, int64_t first, int tokens, int8_t* acts, float* steps,
                int32_t* sums) {
  // A's value k of half t is byte 32·((k/4)%4) + 16t + 4·(k/16) + k%4 of a digit plane.
  alignas(64) uint8_t order[2][kTileK];
  for (int t = 0; t < 2; ++t)
    for (int k = 0; k < kTileK; ++k)
      order[t][k] = static_cast<uint8_t>(32 * ((k / 4) % 4) + 16 * t + 4 * (k / 16) + k % 4);
  const __m512i orders[2] = {_mm512_load_si512(order[0]), _mm512_load_si512(order[1])};
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
        for (int digit = 0; digit < 2; ++digit)
          _mm512_store_si512(rows + digit * kTileK,
                             _mm512_permutex2var_epi8(planes[digit][0], orders[t], planes[digit][1]));
      }
      // The zmm lanes' sums are −Σ hi, then Σ lo; the sixteen lanes cover the block.
      const __m512i neg_hi_sums = _mm512_loadu_si512(lane_sums + b * kZmmSums);
      const __m512i lo_sums = _mm512_loadu_si512(lane_sums + b * kZmmSums + kZmmLanes);
      sums[token * blocks + b] =
          -256 * _mm512_reduce_add_epi32(neg_hi_sums) + _mm512_reduce_add_epi32(lo_sums);
      steps[token * blocks + b] = scales[b * kZmmLanes];  // lane 0: group 0's step, the block's
    }
  }
}

// X_i of a block (lane n: row n's qs dword i) as its four B rows: GF2P8AFFINEQB with matrix rows 7 and 6 =
// bits 2s and 2s + 1 moves a byte's field s to its low bits.
inline void write_b_rows(__m512i x, int i, int8_t* b_tiles) {
  int8_t* out = b_tiles + (i / 4) * kPanelRows * kTileK + (i % 4) * 4 * kTileK;
  for (int s = 0; s < 4; ++s) {
    const uint64_t field = (uint64_t{1} << (2 * s)) << 56 | (uint64_t{2} << (2 * s)) << 48;
    _mm512_store_si512(out + s * kTileK,
                       _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(static_cast<long long>(field)), 0));
  }
}

// A 16-row panel of PQ2_0 rows (a short panel repeats its last row): per block, the sixteen 32-byte qs
// vectors transposed by dwords in registers.
struct RowsPanel {
  const uint8_t* rows[kPanelRows];
  __m512i scale_offsets;  // of each row's block from rows[0]
  int valid;

  RowsPanel(const TernaryMatrix& w, int64_t row, int valid_rows)
      : scale_offsets(panel_row_offsets(w, valid_rows)), valid(valid_rows) {
    for (int n = 0; n < kPanelRows; ++n)
      rows[n] = w.data + static_cast<size_t>(row + std::min(n, valid - 1)) * w.row_bytes;
  }

  __m512 d_w(int64_t b) const {
    const __m512i bits = _mm512_i32gather_epi32(scale_offsets, rows[0] + b * kPq2BlockBytes, 1);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(bits));
  }

  void write_b_tiles(int64_t b, int8_t* b_tiles) const {
    const int64_t offset = b * static_cast<int64_t>(kPq2BlockBytes) + 2;
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
    for (int d = 0; d < 4; ++d) {
      write_b_rows(_mm512_permutex2var_epi64(u[d], low_lanes, u[4 + d]), d, b_tiles);       // X_d
      write_b_rows(_mm512_permutex2var_epi64(u[d], high_lanes, u[4 + d]), d + 4, b_tiles);  // X_{d+4}
    }
  }
};

// A stored panel of a PQ2_0 panels matrix (quant/pq2_panels.h): its vectors are the X_i already.
struct StoredPanel {
  const uint8_t* scales;
  const uint8_t* vectors;
  int valid;

  StoredPanel(const TernaryMatrix& w, int64_t row, int valid_rows) : valid(valid_rows) {
    scales = w.data + static_cast<size_t>(row / kPanelRows) * quant::pq2_panel_bytes(w.cols);
    vectors = scales + quant::pq2_panel_scale_bytes(w.cols);
  }

  __m512 d_w(int64_t b) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + 32 * b)));
  }

  void write_b_tiles(int64_t b, int8_t* b_tiles) const {
    for (int i = 0; i < 8; ++i) write_b_rows(_mm512_loadu_si512(vectors + (8 * b + i) * 64), i, b_tiles);
  }
};

// y for one panel and kTokens tokens from `token`, whose A tiles are at `acts`.
template <class Panel, int kTokens>
void panel_tokens(float* y, int64_t y_stride, int64_t blocks, const Panel& panel, int64_t row,
                  const int8_t* acts, const float* steps, const int32_t* sums, int64_t token) {
  constexpr int64_t kATileBytes = int64_t{kTokens} * kRowsPerToken * kTileK;
  alignas(64) int8_t b_tiles[kRing][kBBlockBytes];
  alignas(64) int32_t dots[kRing][kTokens * kRowsPerToken][kPanelRows];  // [block][A row]
  __m512 acc[kTokens];
  for (int j = 0; j < kTokens; ++j) acc[j] = _mm512_setzero_ps();
  const auto combine = [&](int64_t b) {
    const __m512 d_w = panel.d_w(b);
    for (int j = 0; j < kTokens; ++j) {
      const int64_t at = (token + j) * blocks + b;
      const int32_t* hi = dots[b % kRing][j * kRowsPerToken];
      const __m512i dot = _mm512_sub_epi32(
          _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(hi), 8), _mm512_load_si512(hi + kPanelRows)),
          _mm512_set1_epi32(sums[at]));
      const __m512 block_sum = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(steps[at]));
      acc[j] = _mm512_fmadd_ps(block_sum, d_w, acc[j]);
    }
  };
  for (int64_t b = 0; b < std::min<int64_t>(kLead, blocks); ++b) panel.write_b_tiles(b, b_tiles[b]);
  for (int64_t b = 0; b < blocks; ++b) {
    if (b + kLead < blocks) panel.write_b_tiles(b + kLead, b_tiles[(b + kLead) % kRing]);
    const int8_t* a_block = acts + 2 * b * kATileBytes;
    const int8_t* b_block = b_tiles[b % kRing];
    _tile_loadd(0, a_block, kTileK);
    _tile_loadd(1, a_block + kATileBytes, kTileK);
    _tile_loadd(2, b_block, kTileK);
    _tile_loadd(3, b_block + kPanelRows * kTileK, kTileK);
    _tile_zero(4);
    _tile_dpbsud(4, 0, 2);
    _tile_dpbsud(4, 1, 3);
    _tile_stored(4, dots[b % kRing], kPanelRows * 4);
    if (b >= 1) combine(b - 1);
  }
  combine(blocks - 1);
  const __mmask16 written = static_cast<__mmask16>((1u << panel.valid) - 1u);
  for (int j = 0; j < kTokens; ++j) _mm512_mask_storeu_ps(y + (token + j) * y_stride + row, written, acc[j]);
}

template <class Panel>
using PanelTokens = void (*)(float*, int64_t, int64_t, const Panel&, int64_t, const int8_t*, const float*,
                             const int32_t*, int64_t);
template <class Panel>
constexpr PanelTokens<Panel> kPanelTokens[kMaxTokens] = {
    panel_tokens<Panel, 1>, panel_tokens<Panel, 2>, panel_tokens<Panel, 3>, panel_tokens<Panel, 4>,
    panel_tokens<Panel, 5>, panel_tokens<Panel, 6>, panel_tokens<Panel, 7>, panel_tokens<Panel, 8>};

// Rows [row_begin, row_end) (a range of whole panels where Panel is a stored one) for every token.
template <class Panel>
void few_tokens(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
                int64_t row_end) {
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t token_groups = (a.n_tokens + kMaxTokens - 1) / kMaxTokens;
  const int64_t group_bytes = 2 * blocks * a_tile_bytes(kMaxTokens);
  int8_t* acts = scratch.acts.at_least(static_cast<size_t>(token_groups * group_bytes));
  float* steps = scratch.steps.at_least(static_cast<size_t>(a.n_tokens * blocks));
  int32_t* sums = scratch.sums.at_least(static_cast<size_t>(a.n_tokens * blocks));
  const auto group_tokens = [&](int64_t group) {
    return static_cast<int>(std::min<int64_t>(kMaxTokens, a.n_tokens - group * kMaxTokens));
  };
  for (int64_t group = 0; group < token_groups; ++group)
    build_acts(a, group * kMaxTokens, group_tokens(group), acts + group * group_bytes, steps, sums);

  // Panels outside, token groups inside: a panel's rows are read from memory once for all tokens.
  int configured = 0;
  for (int64_t row = row_begin; row < row_end; row += kPanelRows) {
    const Panel panel(w, row, static_cast<int>(std::min<int64_t>(kPanelRows, row_end - row)));
    for (int64_t group = 0; group < token_groups; ++group) {
      const int tokens = group_tokens(group);
      if (tokens != configured) {
        if (configured != 0) _tile_release();
        const amx::TileConfig config = tile_config(tokens);
        _tile_loadconfig(&config);
        configured = tokens;
      }
      kPanelTokens<Panel>[tokens - 1](y, y_stride, blocks, panel, row, acts + group * group_bytes, steps,
                                      sums, group * kMaxTokens);
    }
  }
  _tile_release();
}

}  // namespace

void pq2_rows_amx_few(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end) {
  if (group_steps_handed_to(pq2_rows_avx512_groups, y, y_stride, w, a, row_begin, row_end)) return;
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  few_tokens<RowsPanel>(y, y_stride, w, a, row_begin, row_end);
}

void pq2_panel_form_rows_amx_few(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                                 int64_t row_begin, int64_t row_end) {
  if (group_steps_handed_to(pq2_panel_form_rows_groups, y, y_stride, w, a, row_begin, row_end)) return;
  const int64_t first = rows_before_whole_panels(pq2_rows_amx_few, y, y_stride, w, a, row_begin, row_end);
  if (first < row_end && a.n_tokens > 0) few_tokens<StoredPanel>(y, y_stride, w, a, first, row_end);
}

}  // namespace tern::kernels::cpu
