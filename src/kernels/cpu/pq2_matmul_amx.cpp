// AMX-INT8 PQ2_0 × two-digit int8 kernel for prefill. One TDPBSSD multiplies a 16-token × 64-value
// activation tile (signed digits) by a 16-row weight panel of code − 1 (signed, so the "− Σ x" term is
// inside the product), giving the exact integers Σ (code − 1)·digit per (token, row) over those values.
// It takes activations with block steps (act_quant.h: prompt tokens): a block's four groups share one
// power-of-two step, so its two half-block products are summed in the tiles and scaled once, which is
// the group order of pq2_matmul.h exactly; the outputs equal pq2_rows_avx512_groups' bit for bit. The hi
// and lo digits go to two accumulator tiles, which AVX-512 stores, joins as 256·hi + lo and scales.
// Activations with group steps go to the group kernel itself (the same bits).
//
// Since any order of a block's values gives its sum, the K order is the one the quantiser stores
// (act_quant.h: byte 32s + i of a plane holds field s of qs byte i), so the activations of a token chunk
// are copied into A tiles (16 tokens × 64 digit bytes, contiguous) by plain moves. Each 16-row panel's
// weights are expanded once per chunk into TDPBSSD's B layout in that order (B row r of half h: field
// 2h + r / 8 of qs dword r % 8, for each of the 16 rows) and reused by every token tile of the chunk:
// gathered from PQ2_0 rows, or loaded from PQ2_0 panels (quant/pq2_panels.h), whose stored vectors are
// the gathered ones. Panels go in pairs, so each A tile loaded serves 32 rows. Both live in per-thread
// scratch that grows on first use only. Every (row, token) output is computed by the same arithmetic
// whatever panel or tile holds it (short panels and token tiles are padded), so results do not depend on
// how rows are split over threads.
//
// Cost: the tile loads and stores and the AVX-512 scaling, not the multiplier, bound it. A block's
// scaling runs in parts between the next block's TDPBSSDs (pair_tile), where the tile unit would wait on
// its loads; after the block's stores, the two took turns.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/panel_gather.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_panel_form.h"

namespace tern::kernels::cpu {

namespace {

// A weight panel (kPanelRows, panel_gather.h) is the 16 int32 columns of an accumulator tile.
constexpr int kTokenTile = 16;                           // tokens per activation tile
constexpr int kDepth = static_cast<int>(2 * kActGroup);  // values per TDPBSSD: half a block
constexpr int kHalves = static_cast<int>(kActBlock) / kDepth;
constexpr int64_t kTileBytes = int64_t{kTokenTile} * kDepth;  // a half's B tile, and an A tile
constexpr int64_t kPanelBlockBytes = kHalves * kTileBytes;    // 2 KiB per panel and block
// The activation copy of one token chunk and K segment (1.25 MiB) stays in L2 (2 MiB here) with the
// segment's expanded panel pair while the chunk sweeps the thread's panels. Each segment after the first
// reads the chunk's sums back from y and every segment writes them, so 256 tokens rather than 512 halve
// those round trips (twice as many blocks a segment) for twice the panel expansions: with the prefetch
// of pair_tile's sums, pp512 1.12-1.72x (median 1.18x) as fast as 512 tokens without it, eight
// alternating rounds on Emerald Rapids (session 37).
constexpr int64_t kChunkBytes = int64_t{5} << 18;
constexpr int64_t kMaxChunkTokens = 256;
// A token tile's block: the hi and lo A tiles of each half, 4 KiB, back to back (padding between blocks
// would leave L2 sets unused once the buffer sits on huge pages).
constexpr int64_t kTileBlockBytes = 2 * kHalves * kTileBytes;
static_assert(kTileBlockBytes == kActBlockBytes * kTokenTile);

// Tiles: 0, 1 the hi and lo digits of a half; 2, 3 the half's codes of the two panels; 4..7 the dots
// hi × panel 0, lo × panel 0, hi × panel 1, lo × panel 1.
amx::TileConfig tile_config() {
  amx::TileConfig config;
  for (int tile = 0; tile < 8; ++tile) config.set(tile, kTokenTile, amx::kMaxTileBytes);
  return config;
}

struct ThreadScratch {
  GrowBuffer<int8_t> acts;    // [token tile][block][half][hi, lo][16 tokens][64]
  GrowBuffer<float> steps;    // [token tile][block][16 tokens]
  GrowBuffer<int8_t> panels;  // [2][blocks][2 halves][16][64]: code − 1 in B layout
  GrowBuffer<float> d_w;      // [2][blocks][16 rows]
};

// Copies blocks [begin, begin + blocks) of tokens [first, first + count) of `a` into token tiles, each
// A tile's 16 rows of 64 bytes contiguous, the last tile's digits and steps zero-padded (its padded tokens'
// sums are computed, as 0, and never stored). Tile loads with the activations' own token stride (one 4 KiB
// page per row at 27B widths) made pp512 0.85-0.96x as fast (Emerald Rapids, 12-05).
void copy_acts(const QuantizedActs& a, int64_t first, int64_t count, int64_t begin, int64_t blocks,
               int8_t* acts, float* steps) {
  if (count % kTokenTile != 0) {
    const int64_t last = count / kTokenTile;
    std::memset(acts + last * blocks * kTileBlockBytes, 0, static_cast<size_t>(blocks * kTileBlockBytes));
    std::fill_n(steps + last * blocks * kTokenTile, blocks * kTokenTile, 0.0f);
  }
  for (int64_t t = 0; t < count; ++t) {
    const int8_t* q = a.token_q(first + t) + begin * kActBlockBytes;
    const float* scales = a.token_zmm_scales(first + t) + begin * kZmmLanes;
    int8_t* tile = acts + t / kTokenTile * blocks * kTileBlockBytes + t % kTokenTile * kDepth;
    float* tile_steps = steps + t / kTokenTile * blocks * kTokenTile + t % kTokenTile;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int digit = 0; digit < 2; ++digit)
        for (int half = 0; half < kHalves; ++half)
          std::memcpy(tile + b * kTileBlockBytes + (2 * half + digit) * kTileBytes,
                      q + b * kActBlockBytes + digit * kActBlock + half * kDepth, kDepth);
      tile_steps[b * kTokenTile] = scales[b * kZmmLanes];  // lane 0: group 0's step, the block's
    }
  }
}

// Writes one qs dword of a panel's sixteen rows (int32 lane r: row r's dword `dword` of block b) into
// its B tiles as code − 1: field s of the dword's bytes is B row 8·(s % 2) + dword of half s / 2.
void unpack_codes(int8_t* panel, int64_t b, int dword, __m512i qs) {
  const __m512i low2 = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
  int8_t* out = panel + b * kPanelBlockBytes + dword * amx::kMaxTileBytes;
  for (int s = 0; s < 4; ++s) {
    const __m512i codes = _mm512_and_si512(_mm512_srli_epi32(qs, 2 * s), low2);
    _mm512_store_si512(out + s * kTileBytes / 2, _mm512_sub_epi8(codes, one));
  }
}

// Expands blocks [begin, end) of PQ2_0 rows [row, row + valid) into B tiles from `panel` (a short panel
// repeats its last row), and their d_w (indexed by absolute block).
struct GatheredRows {
  static void unpack(const TernaryMatrix& w, int64_t row, int valid, int64_t begin, int64_t end,
                     int8_t* panel, float* d_w) {
    gather_panel(w, row, valid, begin, end, d_w,
                 [&](int64_t b, int dword, __m512i qs) { unpack_codes(panel, b - begin, dword, qs); });
  }
};

// The same from the stored panel that starts at `row` (quant/pq2_panels.h).
struct StoredPanel {
  static void unpack(const TernaryMatrix& w, int64_t row, int, int64_t begin, int64_t end, int8_t* panel,
                     float* d_w) {
    load_stored_panel(w, row, begin, end, d_w,
                      [&](int64_t b, int dword, __m512i qs) { unpack_codes(panel, b - begin, dword, qs); });
  }
};

// A block's dots of one panel and token, joined and scaled by the block's step: (D_0 + … + D_3)·s.
__m512 block_sum(const int32_t (*dots)[kTokenTile][16], int m, float step) {
  // 256·hi + lo in one VPDPWSSD: a hi sum (|Σ| ≤ 128·2·127) is its dword's low int16, and the high int16
  // meets 0. One instruction for a shift and an add: every vector instruction counts here.
  const __m512i lo_digit = _mm512_set1_epi32(static_cast<int32_t>(kLoDigit));
  const __m512i dot =
      _mm512_dpwssd_epi32(_mm512_load_si512(dots[1][m]), _mm512_load_si512(dots[0][m]), lo_digit);
  return _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(step));
}

// A block's stored dots, waiting to be added into a pair tile's sums while the next block's tiles run.
struct StoredBlock {
  const int32_t (*dots)[2][kTokenTile][16];  // [panel][hi, lo]
  const float* d_w[2];                       // the block's 16 row scales of each panel
  const float* steps;                        // the block's step of each token
};

// A block's 2 · 16 outputs (output k: panel k / 16, token k % 16) are added in one part a TDPBSSD.
constexpr int kBlockParts = 4 * kHalves;
constexpr int kPartOutputs = 2 * kTokenTile / kBlockParts;

// Adds part q of a stored block's outputs into `acc`: all of them, a short tile's padded tokens and a lone
// panel's copy too (defined, never stored), so the parts have no branches.
inline void add_block_part(float (*acc)[kTokenTile][16], const StoredBlock& block, int q) {
#pragma GCC unroll 4
  for (int k = q * kPartOutputs; k < (q + 1) * kPartOutputs; ++k) {
    const int p = k / kTokenTile, m = k % kTokenTile;
    const __m512 sum = block_sum(block.dots[p], m, block.steps[m]);
    _mm512_store_ps(acc[p][m], _mm512_fmadd_ps(sum, _mm512_load_ps(block.d_w[p]), _mm512_load_ps(acc[p][m])));
  }
}

// The y lines of one token's sums in a panel pair (32 rows from `at`), requested into L2. A later K
// segment starts from them and every segment ends in them, and with one token's rows y_stride apart no
// hardware prefetcher follows them: the loads that start a segment waited on memory (13% of pair_tile's
// samples in pp512). pair_tile requests the next tile's, two tokens a block (all 32 at once before the
// tile took 4-5% of the samples in the prefetches themselves).
struct NextTile {
  const float* sums = nullptr;  // its first token's sums in y
  int64_t tokens = 0;
};

inline void prefetch_token_sums(const float* at) {
  _mm_prefetch(reinterpret_cast<const char*>(at), _MM_HINT_T1);
  _mm_prefetch(reinterpret_cast<const char*>(at) + 2 * kPanelRows * sizeof(float) - 1, _MM_HINT_T1);
}

// y for the rows of two panels (`valid[p]` rows from `row + 16p`; valid[1] may be 0) and one token tile
// (`tokens` real ones from `token`), over `blocks` blocks of a K segment: the sums start from 0 in the
// first segment and from y, the earlier segments' sums, in the others, so every segment continues the
// block order. Along the way it requests the sums of `next`, the tile the caller runs after it.
void pair_tile(float* y, int64_t y_stride, int64_t blocks, bool first_segment, const int8_t* const panels[2],
               const float* const d_w[2], const int8_t* acts, const float* steps, int64_t row,
               const int valid[2], int64_t token, int tokens, const NextTile& next) {
  // [panel][hi, lo]: one buffer, as the previous block's parts are all added before a block's stores
  alignas(64) int32_t dots[2][2][kTokenTile][16];
  alignas(64) float acc[2][kTokenTile][16];
  std::memset(acc, 0, sizeof acc);
  const int panel_count = valid[1] > 0 ? 2 : 1;
  if (!first_segment) {
    for (int p = 0; p < panel_count; ++p) {
      const __mmask16 rows = static_cast<__mmask16>((1u << valid[p]) - 1u);
      for (int m = 0; m < tokens; ++m)
        _mm512_store_ps(acc[p][m],
                        _mm512_maskz_loadu_ps(rows, y + (token + m) * y_stride + row + p * kPanelRows));
    }
  }
  const int8_t* const second = panels[panel_count - 1];  // a lone panel runs twice, the copy unused
  StoredBlock stored{};
  // Each tile load waits for the TDPBSSDs that read its tile before, and a block's tile stores for its
  // last TDPBSSD, so the tile unit idles between instructions: the previous block's scaling goes into
  // those gaps, a part after each TDPBSSD. Against scaling each block after its stores (Emerald Rapids,
  // 12-06): 1.23x a block's throughput in L2, pp512 1.10-1.12x.
  // Between TDPBSSDs also goes an eighth of the next 4 KiB of activations (the next block, or after the
  // last the next token tile's first), requested from L2 into L1: the first tile load of a block waited
  // on L2 (pp512 1.04-1.12x, median 1.09x, six alternating rounds on Emerald Rapids, 12-06; the panels' B
  // tiles too were slower). After the last token tile the requests fall past the copy, which a prefetch may.
  const int8_t* next_acts = acts;
  const auto between_tiles = [&](int q) {
    for (int line = 0; line < kTileBlockBytes / 64 / kBlockParts; ++line)
      _mm_prefetch(reinterpret_cast<const char*>(next_acts) + (q * kTileBlockBytes / kBlockParts + line * 64),
                   _MM_HINT_T0);
    if (stored.dots != nullptr) add_block_part(acc, stored, q);
  };
  const float* const second_d_w = d_w[panel_count - 1];
  for (int64_t b = 0; b < blocks; ++b) {
    const int8_t* tiles = acts + b * kTileBlockBytes;
    next_acts = tiles + kTileBlockBytes;
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
#pragma GCC unroll 2
    for (int half = 0; half < kHalves; ++half) {
      _tile_loadd(0, tiles + (2 * half) * kTileBytes, kDepth);
      _tile_loadd(2, panels[0] + b * kPanelBlockBytes + half * kTileBytes, amx::kMaxTileBytes);
      _tile_dpbssd(4, 0, 2);
      between_tiles(4 * half);
      _tile_loadd(1, tiles + (2 * half + 1) * kTileBytes, kDepth);
      _tile_dpbssd(5, 1, 2);
      between_tiles(4 * half + 1);
      _tile_loadd(3, second + b * kPanelBlockBytes + half * kTileBytes, amx::kMaxTileBytes);
      _tile_dpbssd(6, 0, 3);
      between_tiles(4 * half + 2);
      _tile_dpbssd(7, 1, 3);
      between_tiles(4 * half + 3);
    }
    _tile_stored(4, dots[0][0], amx::kMaxTileBytes);
    _tile_stored(5, dots[0][1], amx::kMaxTileBytes);
    _tile_stored(6, dots[1][0], amx::kMaxTileBytes);
    _tile_stored(7, dots[1][1], amx::kMaxTileBytes);
    for (int64_t m = 2 * b; m < std::min(2 * b + 2, next.tokens); ++m)
      prefetch_token_sums(next.sums + m * y_stride);
    stored = {dots, {d_w[0] + b * kPanelRows, second_d_w + b * kPanelRows}, steps + b * kTokenTile};
  }
  for (int q = 0; q < kBlockParts; ++q) add_block_part(acc, stored, q);  // the last block (blocks ≥ 1)
  for (int p = 0; p < panel_count; ++p) {
    const __mmask16 rows = static_cast<__mmask16>((1u << valid[p]) - 1u);
    for (int m = 0; m < tokens; ++m)
      _mm512_mask_storeu_ps(y + (token + m) * y_stride + row + p * kPanelRows, rows,
                            _mm512_load_ps(acc[p][m]));
  }
}

// The walk: token chunks of up to kMaxChunkTokens, each over K segments whose activations fit kChunkBytes;
// per segment the panel pairs are unpacked by Source::unpack once and swept by the chunk's token tiles.
// A segment's expanded panel pair (kPanelBlockBytes a block and panel) stays in L1 or L2 beside the
// segment's activations, and a matrix is expanded once per chunk whatever its K.
template <class Source>
void amx_rows(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
              int64_t row_end) {
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t chunk = std::min(kMaxChunkTokens, (a.n_tokens + kTokenTile - 1) / kTokenTile * kTokenTile);
  const int64_t segment = std::clamp<int64_t>(kChunkBytes / (chunk * kActBlockBytes), 1, blocks);
  const int64_t chunk_tiles = chunk / kTokenTile;
  int8_t* acts = scratch.acts.at_least(static_cast<size_t>(chunk_tiles * segment * kTileBlockBytes));
  float* steps = scratch.steps.at_least(static_cast<size_t>(chunk * segment));
  int8_t* panel_bytes = scratch.panels.at_least(static_cast<size_t>(2 * segment * kPanelBlockBytes));
  float* d_w_values = scratch.d_w.at_least(static_cast<size_t>(2 * blocks * kPanelRows));
  const int8_t* const panels[2] = {panel_bytes, panel_bytes + segment * kPanelBlockBytes};

  const amx::TileConfig config = tile_config();
  const amx::TileScope tiles(config);
  for (int64_t first = 0; first < a.n_tokens; first += chunk) {
    const int64_t count = std::min(chunk, a.n_tokens - first);
    for (int64_t begin = 0; begin < blocks; begin += segment) {
      const int64_t length = std::min(segment, blocks - begin);
      copy_acts(a, first, count, begin, length, acts, steps);
      const float* const d_w[2] = {d_w_values + begin * kPanelRows,
                                   d_w_values + (blocks + begin) * kPanelRows};
      for (int64_t row = row_begin; row < row_end; row += 2 * kPanelRows) {
        const int valid[2] = {
            static_cast<int>(std::min<int64_t>(kPanelRows, row_end - row)),
            static_cast<int>(std::clamp<int64_t>(row_end - row - kPanelRows, 0, kPanelRows))};
        for (int p = 0; p < 2; ++p) {
          if (valid[p] > 0) {
            Source::unpack(w, row + p * kPanelRows, valid[p], begin, begin + length,
                           panel_bytes + p * segment * kPanelBlockBytes,
                           d_w_values + p * blocks * kPanelRows);
          }
        }
        for (int64_t t = 0; t < count; t += kTokenTile) {
          NextTile next;
          if (t + kTokenTile < count) {
            next = {y + (first + t + kTokenTile) * y_stride + row,
                    std::min<int64_t>(kTokenTile, count - t - kTokenTile)};
          } else if (row + 2 * kPanelRows < row_end) {
            next = {y + first * y_stride + row + 2 * kPanelRows, std::min<int64_t>(kTokenTile, count)};
          }
          pair_tile(y, y_stride, length, begin == 0, panels, d_w,
                    acts + t / kTokenTile * length * kTileBlockBytes, steps + t * length, row, valid,
                    first + t, static_cast<int>(std::min<int64_t>(kTokenTile, count - t)), next);
        }
      }
    }
  }
}

}  // namespace

void pq2_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                  int64_t row_begin, int64_t row_end) {
  if (group_steps_handed_to(pq2_rows_avx512_groups, y, y_stride, w, a, row_begin, row_end)) return;
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  amx_rows<GatheredRows>(y, y_stride, w, a, row_begin, row_end);
}

void pq2_panel_form_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  if (group_steps_handed_to(pq2_panel_form_rows_groups, y, y_stride, w, a, row_begin, row_end)) return;
  const int64_t first = rows_before_whole_panels(pq2_rows_amx, y, y_stride, w, a, row_begin, row_end);
  if (first < row_end) amx_rows<StoredPanel>(y, y_stride, w, a, first, row_end);
}

}  // namespace tern::kernels::cpu
