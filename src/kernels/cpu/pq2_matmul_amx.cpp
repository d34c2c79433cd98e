// AMX-INT8 PQ2_0 × two-digit int8 kernel for prefill. One TDPBSSD multiplies a 16-token × 32-value
// activation tile (one scale group, signed digits) by a 16-row weight panel of code − 1 (signed, so the
// "− Σ x" term is inside the product), giving the exact integers Σ (code − 1)·digit per (token, row,
// group) that the VNNI path sums from its lanes. The hi and lo digits go to two accumulator tiles; after
// each 128-block the tiles are stored and AVX-512 combines 256·hi + lo and scales in the group order of
// pq2_matmul.h, so the outputs equal pq2_rows_avx512_groups' bit for bit.
//
// Per call: the activations of a token chunk are copied once into natural element order, each A tile
// (16 tokens × one group's 32 digits) as 512 contiguous bytes; each 16-row panel's weights are expanded
// once per chunk into TDPBSSD's B layout (row r of a group's tile holds, for each of the 16 rows, the
// codes of values 4r..4r+3, i.e. one qs byte) and reused by every 16-token tile of the chunk: gathered
// from PQ2_0 rows, or loaded from PQ2_0 panels (quant/pq2_panels.h), whose stored vectors are the gathered
// ones. Panels go in pairs, so each A tile loaded serves 32 rows. Both live in per-thread scratch that grows
// on first use only. Every (row, token) output is computed by the same arithmetic whatever panel or tile
// holds it (short panels and token tiles are padded), so results do not depend on how rows are split over
// threads.
//
// Cost: exact per-group sums mean K = 32 per TDPBSSD and a tile store per product; the tile loads and
// stores and the AVX-512 scaling, not the multiplier, bound it, and they do not overlap: a block's tile
// work and its scaling take turns (measured on Emerald Rapids, 12-05: running the scaling a block behind
// the tiles was 1.05x slower). About 2.5x the VNNI kernel per core, a tenth of the TDPBSSD peak.
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
constexpr int kTokenTile = 16;                            // tokens per activation tile
constexpr int kGroupBytes = static_cast<int>(kActGroup);  // K per TDPBSSD: one scale group
constexpr int kGroups = static_cast<int>(kActBlock / kActGroup);
constexpr int64_t kPanelGroupBytes = kGroupBytes * kPanelRows;    // one B tile: 8 rows × 64 bytes
constexpr int64_t kPanelBlockBytes = kGroups * kPanelGroupBytes;  // 2 KiB per panel and block
// The activation copy of one token chunk (1.25 MiB) stays in L2 (2 MiB here) with a pair of expanded
// panels (0.5 MiB at K = 17408) while the chunk sweeps the thread's panels.
constexpr int64_t kChunkBytes = int64_t{5} << 18;
constexpr int64_t kActTileBytes = kTokenTile * kGroupBytes;       // one A tile: 512 bytes
constexpr int64_t kTileBlockBytes = kGroups * 2 * kActTileBytes;  // hi and lo tiles of a block: 4 KiB
constexpr int64_t kTileBlockSteps = kTokenTile * kGroups;         // steps of a block's 16 tokens

// Tiles: 0, 1 the hi and lo digits of a group; 2, 3 the group's codes of the two panels; 4..7 the dots
// hi × panel 0, lo × panel 0, hi × panel 1, lo × panel 1.
amx::TileConfig tile_config() {
  amx::TileConfig config;
  config.set(0, kTokenTile, kGroupBytes);
  config.set(1, kTokenTile, kGroupBytes);
  config.set(2, kGroupBytes / 4, amx::kMaxTileBytes);
  config.set(3, kGroupBytes / 4, amx::kMaxTileBytes);
  for (int dots = 4; dots < 8; ++dots) config.set(dots, kTokenTile, amx::kMaxTileBytes);
  return config;
}

struct ThreadScratch {
  GrowBuffer<int8_t> acts;    // [token tile][block][group][hi, lo][16 tokens][32]: natural element order
  GrowBuffer<float> steps;    // [token tile][block][16 tokens][4 groups]
  GrowBuffer<int8_t> panels;  // [2][blocks][4 groups][8][64]: code − 1 in B layout
  GrowBuffer<float> d_w;      // [2][blocks][16 rows]
};

// Copies tokens [first, first + count) of `a` into tiles, the last one zero-padded.
void copy_acts(const QuantizedActs& a, int64_t first, int64_t count, int8_t* acts, float* steps) {
  const int64_t blocks = a.blocks();
  if (count % kTokenTile != 0) {
    const int64_t last = count / kTokenTile;
    std::memset(acts + last * blocks * kTileBlockBytes, 0, static_cast<size_t>(blocks * kTileBlockBytes));
    std::memset(steps + last * blocks * kTileBlockSteps, 0,
                static_cast<size_t>(blocks * kTileBlockSteps) * sizeof(float));
  }
  // Stored byte 32s + i holds element 4i + s; output byte e takes stored byte 32(e % 4) + e / 4.
  alignas(64) uint8_t order[2][64];
  for (int half = 0; half < 2; ++half)
    for (int e = 0; e < 64; ++e) {
      const int element = 64 * half + e;
      order[half][e] = static_cast<uint8_t>(32 * (element % 4) + element / 4);
    }
  const __m512i order0 = _mm512_load_si512(order[0]), order1 = _mm512_load_si512(order[1]);
  for (int64_t t = 0; t < count; ++t) {
    const int8_t* q = a.token_q(first + t);
    const float* scales = a.token_zmm_scales(first + t);
    const int64_t m = t % kTokenTile;
    int8_t* tile = acts + t / kTokenTile * blocks * kTileBlockBytes + m * kGroupBytes;
    float* tile_steps = steps + t / kTokenTile * blocks * kTileBlockSteps + m * kGroups;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int digit = 0; digit < 2; ++digit) {  // hi plane, then lo plane
        const int8_t* plane = q + b * kActBlockBytes + digit * kActBlock;
        const __m512i lower = _mm512_loadu_si512(plane), upper = _mm512_loadu_si512(plane + 64);
        const __m512i natural[2] = {_mm512_permutex2var_epi8(lower, order0, upper),
                                    _mm512_permutex2var_epi8(lower, order1, upper)};
        for (int g = 0; g < kGroups; ++g) {
          const __m256i group = g % 2 == 0 ? _mm512_castsi512_si256(natural[g / 2])
                                           : _mm512_extracti64x4_epi64(natural[g / 2], 1);
          _mm256_storeu_si256(
              reinterpret_cast<__m256i*>(tile + b * kTileBlockBytes + (2 * g + digit) * kActTileBytes),
              group);
        }
      }
      // zmm lane 2g covers group g.
      for (int g = 0; g < kGroups; ++g) tile_steps[b * kTileBlockSteps + g] = scales[b * kZmmLanes + 2 * g];
    }
  }
}

// Writes one qs dword of a panel's sixteen rows (int32 lane r: row r's dword `dword` of block b) into
// its B tiles as code − 1. Within each qword (rows 2q and 2q + 1), output byte 4h + j of row 2q + h
// takes bits 2j.. of byte k of the row's dword.
class CodeUnpacker {
 public:
  CodeUnpacker() {
    for (int k = 0; k < 4; ++k) {
      uint64_t bits = 0;
      for (int byte = 0; byte < 8; ++byte)
        bits |= static_cast<uint64_t>(32 * (byte / 4) + 8 * k + 2 * (byte % 4)) << (8 * byte);
      select_[k] = _mm512_set1_epi64(static_cast<long long>(bits));
    }
  }

  void operator()(int8_t* panel, int64_t b, int dword, __m512i qs) const {
    int8_t* out = panel + b * kPanelBlockBytes;
    for (int k = 0; k < 4; ++k) {
      const int g = (4 * dword + k) / 8, r = (4 * dword + k) % 8;
      const __m512i codes = _mm512_and_si512(_mm512_multishift_epi64_epi8(select_[k], qs), low2_);
      _mm512_store_si512(out + g * kPanelGroupBytes + r * 64, _mm512_sub_epi8(codes, one_));
    }
  }

 private:
  __m512i select_[4];
  const __m512i low2_ = _mm512_set1_epi8(3), one_ = _mm512_set1_epi8(1);
};

// Expands PQ2_0 rows [row, row + valid) into B tiles (a short panel repeats its last row) and their d_w.
struct GatheredRows {
  static void unpack(const TernaryMatrix& w, int64_t row, int valid, int8_t* panel, float* d_w) {
    const CodeUnpacker unpack;
    gather_panel(w, row, valid, d_w, [&](int64_t b, int dword, __m512i qs) { unpack(panel, b, dword, qs); });
  }
};

// Expands the stored panel that starts at `row` (quant/pq2_panels.h) into B tiles and its d_w.
struct StoredPanel {
  static void unpack(const TernaryMatrix& w, int64_t row, int, int8_t* panel, float* d_w) {
    const CodeUnpacker unpack;
    load_stored_panel(w, row, d_w, [&](int64_t b, int dword, __m512i qs) { unpack(panel, b, dword, qs); });
  }
};

// y for the rows of two panels (`valid[p]` rows from `row + 16p`; valid[1] may be 0) and one token tile
// (`tokens` real ones from `token`).
void pair_tile(float* y, int64_t y_stride, int64_t blocks, const int8_t* const panels[2],
               const float* const d_w[2], const int8_t* acts, const float* steps, int64_t row,
               const int valid[2], int64_t token, int tokens) {
  alignas(64) int32_t dots[2][kGroups][2][kTokenTile][16];  // [panel][group][hi, lo]
  alignas(64) float acc[2][kTokenTile][16];
  std::memset(acc, 0, sizeof acc);
  const int panel_count = valid[1] > 0 ? 2 : 1;
  const int8_t* const second = panels[panel_count - 1];  // a lone panel runs twice, the copy unused
  for (int64_t b = 0; b < blocks; ++b) {
    const int8_t* tiles = acts + b * kTileBlockBytes;
    for (int g = 0; g < kGroups; ++g) {
      _tile_loadd(0, tiles + (2 * g) * kActTileBytes, kGroupBytes);
      _tile_loadd(1, tiles + (2 * g + 1) * kActTileBytes, kGroupBytes);
      _tile_loadd(2, panels[0] + b * kPanelBlockBytes + g * kPanelGroupBytes, 64);
      _tile_loadd(3, second + b * kPanelBlockBytes + g * kPanelGroupBytes, 64);
      _tile_zero(4);
      _tile_zero(5);
      _tile_zero(6);
      _tile_zero(7);
      _tile_dpbssd(4, 0, 2);
      _tile_dpbssd(5, 1, 2);
      _tile_dpbssd(6, 0, 3);
      _tile_dpbssd(7, 1, 3);
      _tile_stored(4, dots[0][g][0], 64);
      _tile_stored(5, dots[0][g][1], 64);
      _tile_stored(6, dots[1][g][0], 64);
      _tile_stored(7, dots[1][g][1], 64);
    }
    const float* block_steps = steps + b * kTileBlockSteps;
    // 256·hi + lo in one VPDPWSSD: a hi sum (|Σ| ≤ 32·2·128) is its dword's low int16, and the high int16
    // meets 0. One instruction for a shift and an add: the tile unit and the vector units take turns
    // here, so every vector instruction counts (0.93-0.97x the time on 512 tokens, Emerald Rapids).
    const __m512i lo_digit = _mm512_set1_epi32(static_cast<int32_t>(kLoDigit));
    for (int p = 0; p < panel_count; ++p) {
      const __m512 scale = _mm512_load_ps(d_w[p] + b * kPanelRows);
      for (int m = 0; m < kTokenTile; ++m) {
        const float* step = block_steps + m * kGroups;
        __m512 scaled[kGroups];
        for (int g = 0; g < kGroups; ++g) {
          const __m512i dot = _mm512_dpwssd_epi32(_mm512_load_si512(dots[p][g][1][m]),
                                                  _mm512_load_si512(dots[p][g][0][m]), lo_digit);
          scaled[g] = _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(step[g]));
        }
        const __m512 sum =
            _mm512_add_ps(_mm512_add_ps(scaled[0], scaled[1]), _mm512_add_ps(scaled[2], scaled[3]));
        _mm512_store_ps(acc[p][m], _mm512_fmadd_ps(sum, scale, _mm512_load_ps(acc[p][m])));
      }
    }
  }
  for (int p = 0; p < panel_count; ++p) {
    const __mmask16 rows = static_cast<__mmask16>((1u << valid[p]) - 1u);
    for (int m = 0; m < tokens; ++m)
      _mm512_mask_storeu_ps(y + (token + m) * y_stride + row + p * kPanelRows, rows,
                            _mm512_load_ps(acc[p][m]));
  }
}

// The walk: token chunks, panel pairs unpacked once per chunk by Source::unpack, token tiles.
template <class Source>
void amx_rows(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
              int64_t row_end) {
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t per_token = blocks * kActBlockBytes;
  const int64_t chunk = std::max<int64_t>(kTokenTile, kChunkBytes / per_token / kTokenTile * kTokenTile);
  const int64_t chunk_tiles = (std::min(chunk, a.n_tokens) + kTokenTile - 1) / kTokenTile;
  int8_t* acts = scratch.acts.at_least(static_cast<size_t>(chunk_tiles * blocks * kTileBlockBytes));
  float* steps = scratch.steps.at_least(static_cast<size_t>(chunk_tiles * blocks * kTileBlockSteps));
  int8_t* panel_bytes = scratch.panels.at_least(static_cast<size_t>(2 * blocks * kPanelBlockBytes));
  float* d_w_values = scratch.d_w.at_least(static_cast<size_t>(2 * blocks * kPanelRows));
  const int8_t* const panels[2] = {panel_bytes, panel_bytes + blocks * kPanelBlockBytes};
  const float* const d_w[2] = {d_w_values, d_w_values + blocks * kPanelRows};

  const amx::TileConfig config = tile_config();
  const amx::TileScope tiles(config);
  for (int64_t first = 0; first < a.n_tokens; first += chunk) {
    const int64_t count = std::min(chunk, a.n_tokens - first);
    copy_acts(a, first, count, acts, steps);
    for (int64_t row = row_begin; row < row_end; row += 2 * kPanelRows) {
      const int valid[2] = {static_cast<int>(std::min<int64_t>(kPanelRows, row_end - row)),
                            static_cast<int>(std::clamp<int64_t>(row_end - row - kPanelRows, 0, kPanelRows))};
      for (int p = 0; p < 2; ++p) {
        if (valid[p] > 0) {
          Source::unpack(w, row + p * kPanelRows, valid[p], panel_bytes + p * blocks * kPanelBlockBytes,
                         d_w_values + p * blocks * kPanelRows);
        }
      }
      for (int64_t t = 0; t < count; t += kTokenTile) {
        pair_tile(y, y_stride, blocks, panels, d_w, acts + t / kTokenTile * blocks * kTileBlockBytes,
                  steps + t / kTokenTile * blocks * kTileBlockSteps, row, valid, first + t,
                  static_cast<int>(std::min<int64_t>(kTokenTile, count - t)));
      }
    }
  }
}

}  // namespace

void pq2_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                  int64_t row_begin, int64_t row_end) {
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  amx_rows<GatheredRows>(y, y_stride, w, a, row_begin, row_end);
}

void pq2_panel_form_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  const int64_t first = rows_before_whole_panels(pq2_rows_amx, y, y_stride, w, a, row_begin, row_end);
  if (first < row_end) amx_rows<StoredPanel>(y, y_stride, w, a, first, row_end);
}

}  // namespace tern::kernels::cpu
