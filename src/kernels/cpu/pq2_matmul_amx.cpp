// AMX-INT8 PQ2_0 × two-digit int8 kernel for prefill. One TDPBSSD multiplies a 16-token × K-value
// activation tile (signed digits) by a 16-row weight panel of code − 1 (signed, so the "− Σ x" term is
// inside the product), giving the exact integers Σ (code − 1)·digit per (token, row) over those K values.
// The hi and lo digits go to two accumulator tiles, which AVX-512 stores, joins as 256·hi + lo and scales
// in the group order of pq2_matmul.h, so the outputs equal pq2_rows_avx512_groups' bit for bit. K is one
// scale group (32), each group's dots stored and scaled apart; or, for activations with block steps
// (act_quant.h: prompt tokens), half a block (64), the block's dots summed in the tiles and scaled once,
// which is the group order's value exactly.
//
// Per call: the activations of a token chunk are copied once into natural element order, each A tile
// (16 tokens × K digits) contiguous; each 16-row panel's weights are expanded once per chunk into
// TDPBSSD's B layout (row r of a group's tile holds, for each of the 16 rows, the codes of values
// 4r..4r+3, i.e. one qs byte; a block's four group tiles follow each other, so two are one K = 64 tile)
// and reused by every 16-token tile of the chunk: gathered from PQ2_0 rows, or loaded from PQ2_0 panels
// (quant/pq2_panels.h), whose stored vectors are the gathered ones. Panels go in pairs, so each A tile
// loaded serves 32 rows. Both live in per-thread scratch that grows on first use only. Every (row, token)
// output is computed by the same arithmetic whatever panel or tile holds it (short panels and token tiles
// are padded), so results do not depend on how rows are split over threads.
//
// Cost: the tile loads and stores and the AVX-512 scaling, not the multiplier, bound it, and they do not
// overlap: a block's tile work and its scaling take turns (measured on Emerald Rapids, 12-05: running the
// scaling a block behind the tiles was 1.05x slower). So block steps, with half the TDPBSSDs, a quarter of
// the stores and of the scaling, pay directly.
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
constexpr int kTokenTile = 16;  // tokens per activation tile
constexpr int kGroups = static_cast<int>(kActBlock / kActGroup);
constexpr int64_t kPanelGroupBytes = kActGroup * kPanelRows;      // a group's codes: 8 rows × 64 bytes
constexpr int64_t kPanelBlockBytes = kGroups * kPanelGroupBytes;  // 2 KiB per panel and block
// The activation copy of one token chunk and K segment (1.25 MiB) stays in L2 (2 MiB here) with the
// segment's expanded panel pair while the chunk sweeps the thread's panels.
constexpr int64_t kChunkBytes = int64_t{5} << 18;
constexpr int64_t kMaxChunkTokens = 512;
constexpr int64_t kTileBlockBytes = 2 * kActBlock * kTokenTile;  // hi and lo tiles of a block: 4 KiB

// K, the values one TDPBSSD takes per token: one scale group (32) where each group has its own step, so
// each group's sums are stored and scaled apart, or half a block (64) where the block's groups share one
// power-of-two step (act_quant.h), so a block's sums stay in the tiles and are scaled once: half the
// TDPBSSDs, a quarter of the tile stores and of the vector work.
template <int K>
struct Depth {
  static_assert(K == kActGroup || K == 2 * kActGroup);
  static constexpr bool kBlockSteps = K == 2 * kActGroup;
  static constexpr int kParts = static_cast<int>(kActBlock) / K;  // TDPBSSDs a block per digit and panel
  static constexpr int64_t kTileBytes = int64_t{kTokenTile} * K;  // an A tile, and a part's B tile
  static constexpr int kSums = kBlockSteps ? 1 : kGroups;         // stored dots a block per digit and panel
  static constexpr int64_t kTileBlockSteps = int64_t{kTokenTile} * kSums;  // steps of a block's 16 tokens
};

// Tiles: 0, 1 the hi and lo digits of a part; 2, 3 the part's codes of the two panels; 4..7 the dots
// hi × panel 0, lo × panel 0, hi × panel 1, lo × panel 1.
template <int K>
amx::TileConfig tile_config() {
  amx::TileConfig config;
  config.set(0, kTokenTile, K);
  config.set(1, kTokenTile, K);
  config.set(2, K / 4, amx::kMaxTileBytes);
  config.set(3, K / 4, amx::kMaxTileBytes);
  for (int dots = 4; dots < 8; ++dots) config.set(dots, kTokenTile, amx::kMaxTileBytes);
  return config;
}

struct ThreadScratch {
  GrowBuffer<int8_t> acts;    // [token tile][block][part][hi, lo][16 tokens][K]: natural element order
  GrowBuffer<float> steps;    // [token tile][block][16 tokens][Depth::kSums]
  GrowBuffer<int8_t> panels;  // [2][blocks][4 groups][8][64]: code − 1 in B layout
  GrowBuffer<float> d_w;      // [2][blocks][16 rows]
};

// Copies blocks [begin, begin + blocks) of tokens [first, first + count) of `a` into tiles, the last one
// zero-padded.
template <int K>
void copy_acts(const QuantizedActs& a, int64_t first, int64_t count, int64_t begin, int64_t blocks,
               int8_t* acts, float* steps) {
  using D = Depth<K>;
  if (count % kTokenTile != 0) {
    const int64_t last = count / kTokenTile;
    std::memset(acts + last * blocks * kTileBlockBytes, 0, static_cast<size_t>(blocks * kTileBlockBytes));
    std::memset(steps + last * blocks * D::kTileBlockSteps, 0,
                static_cast<size_t>(blocks * D::kTileBlockSteps) * sizeof(float));
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
    int8_t* tile = acts + t / kTokenTile * blocks * kTileBlockBytes + m * K;
    float* tile_steps = steps + t / kTokenTile * blocks * D::kTileBlockSteps + m * D::kSums;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int digit = 0; digit < 2; ++digit) {  // hi plane, then lo plane
        const int8_t* plane = q + (begin + b) * kActBlockBytes + digit * kActBlock;
        const __m512i lower = _mm512_loadu_si512(plane), upper = _mm512_loadu_si512(plane + 64);
        const __m512i natural[2] = {_mm512_permutex2var_epi8(lower, order0, upper),
                                    _mm512_permutex2var_epi8(lower, order1, upper)};
        int8_t* out = tile + b * kTileBlockBytes + digit * D::kTileBytes;
        if constexpr (D::kBlockSteps) {
          for (int part = 0; part < 2; ++part)
            _mm512_storeu_si512(out + 2 * part * D::kTileBytes, natural[part]);
        } else {
          for (int g = 0; g < kGroups; ++g) {
            const __m256i group = g % 2 == 0 ? _mm512_castsi512_si256(natural[g / 2])
                                             : _mm512_extracti64x4_epi64(natural[g / 2], 1);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * g * D::kTileBytes), group);
          }
        }
      }
      // zmm lane 2g covers group g (under block steps every group's step is the block's).
      for (int g = 0; g < D::kSums; ++g)
        tile_steps[b * D::kTileBlockSteps + g] = scales[(begin + b) * kZmmLanes + 2 * g];
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

// Expands blocks [begin, end) of PQ2_0 rows [row, row + valid) into B tiles from `panel` (a short panel
// repeats its last row), and their d_w (indexed by absolute block).
struct GatheredRows {
  static void unpack(const TernaryMatrix& w, int64_t row, int valid, int64_t begin, int64_t end,
                     int8_t* panel, float* d_w) {
    const CodeUnpacker unpack;
    gather_panel(w, row, valid, begin, end, d_w,
                 [&](int64_t b, int dword, __m512i qs) { unpack(panel, b - begin, dword, qs); });
  }
};

// The same from the stored panel that starts at `row` (quant/pq2_panels.h).
struct StoredPanel {
  static void unpack(const TernaryMatrix& w, int64_t row, int, int64_t begin, int64_t end, int8_t* panel,
                     float* d_w) {
    const CodeUnpacker unpack;
    load_stored_panel(w, row, begin, end, d_w,
                      [&](int64_t b, int dword, __m512i qs) { unpack(panel, b - begin, dword, qs); });
  }
};

// One block's scaled dots of a panel and token: the group order of pq2_matmul.h, or under block steps the
// block's one product, which equals it bit for bit (act_quant.h).
template <int K>
__m512 block_sum(const int32_t (*dots)[2][kTokenTile][16], int m, const float* step) {
  // 256·hi + lo in one VPDPWSSD: a hi sum (|Σ| ≤ 128·2·127) is its dword's low int16, and the high int16
  // meets 0. One instruction for a shift and an add: the tile unit and the vector units take turns
  // here, so every vector instruction counts (0.93-0.97x the time on 512 tokens, Emerald Rapids).
  const __m512i lo_digit = _mm512_set1_epi32(static_cast<int32_t>(kLoDigit));
  const auto scaled = [&](int sum) {
    const __m512i dot =
        _mm512_dpwssd_epi32(_mm512_load_si512(dots[sum][1][m]), _mm512_load_si512(dots[sum][0][m]), lo_digit);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(step[sum]));
  };
  if constexpr (Depth<K>::kBlockSteps) return scaled(0);
  return _mm512_add_ps(_mm512_add_ps(scaled(0), scaled(1)), _mm512_add_ps(scaled(2), scaled(3)));
}

// y for the rows of two panels (`valid[p]` rows from `row + 16p`; valid[1] may be 0) and one token tile
// (`tokens` real ones from `token`), over `blocks` blocks of a K segment: the sums start from 0 in the
// first segment and from y, the earlier segments' sums, in the others, so every segment continues the
// block order.
template <int K>
void pair_tile(float* y, int64_t y_stride, int64_t blocks, bool first_segment, const int8_t* const panels[2],
               const float* const d_w[2], const int8_t* acts, const float* steps, int64_t row,
               const int valid[2], int64_t token, int tokens) {
  using D = Depth<K>;
  alignas(64) int32_t dots[2][D::kSums][2][kTokenTile][16];  // [panel][sum][hi, lo]
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
  const auto store_dots = [&](int sum) {
    _tile_stored(4, dots[0][sum][0], 64);
    _tile_stored(5, dots[0][sum][1], 64);
    _tile_stored(6, dots[1][sum][0], 64);
    _tile_stored(7, dots[1][sum][1], 64);
  };
  const auto zero_dots = [] {
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
  };
  for (int64_t b = 0; b < blocks; ++b) {
    const int8_t* tiles = acts + b * kTileBlockBytes;
    if constexpr (D::kBlockSteps) zero_dots();
    for (int part = 0; part < D::kParts; ++part) {
      _tile_loadd(0, tiles + (2 * part) * D::kTileBytes, K);
      _tile_loadd(1, tiles + (2 * part + 1) * D::kTileBytes, K);
      _tile_loadd(2, panels[0] + b * kPanelBlockBytes + part * D::kTileBytes, 64);
      _tile_loadd(3, second + b * kPanelBlockBytes + part * D::kTileBytes, 64);
      if constexpr (!D::kBlockSteps) zero_dots();
      _tile_dpbssd(4, 0, 2);
      _tile_dpbssd(5, 1, 2);
      _tile_dpbssd(6, 0, 3);
      _tile_dpbssd(7, 1, 3);
      if constexpr (!D::kBlockSteps) store_dots(part);
    }
    if constexpr (D::kBlockSteps) store_dots(0);
    const float* block_steps = steps + b * D::kTileBlockSteps;
    for (int p = 0; p < panel_count; ++p) {
      const __m512 scale = _mm512_load_ps(d_w[p] + b * kPanelRows);
      for (int m = 0; m < kTokenTile; ++m) {
        const __m512 sum = block_sum<K>(dots[p], m, block_steps + m * D::kSums);
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

// The walk: token chunks of up to kMaxChunkTokens, each over K segments whose activations fit kChunkBytes;
// per segment the panel pairs are unpacked by Source::unpack once and swept by the chunk's token tiles.
// A segment's expanded panel pair (kPanelBlockBytes a block and panel) stays in L1 or L2 beside the
// segment's activations, and a matrix is expanded once per chunk whatever its K.
template <class Source, int K>
void amx_rows(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a, int64_t row_begin,
              int64_t row_end) {
  using D = Depth<K>;
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t chunk = std::min(kMaxChunkTokens, (a.n_tokens + kTokenTile - 1) / kTokenTile * kTokenTile);
  const int64_t segment = std::clamp<int64_t>(kChunkBytes / (chunk * kActBlockBytes), 1, blocks);
  const int64_t chunk_tiles = chunk / kTokenTile;
  int8_t* acts = scratch.acts.at_least(static_cast<size_t>(chunk_tiles * segment * kTileBlockBytes));
  float* steps = scratch.steps.at_least(static_cast<size_t>(chunk_tiles * segment * D::kTileBlockSteps));
  int8_t* panel_bytes = scratch.panels.at_least(static_cast<size_t>(2 * segment * kPanelBlockBytes));
  float* d_w_values = scratch.d_w.at_least(static_cast<size_t>(2 * blocks * kPanelRows));
  const int8_t* const panels[2] = {panel_bytes, panel_bytes + segment * kPanelBlockBytes};

  const amx::TileConfig config = tile_config<K>();
  const amx::TileScope tiles(config);
  for (int64_t first = 0; first < a.n_tokens; first += chunk) {
    const int64_t count = std::min(chunk, a.n_tokens - first);
    for (int64_t begin = 0; begin < blocks; begin += segment) {
      const int64_t length = std::min(segment, blocks - begin);
      copy_acts<K>(a, first, count, begin, length, acts, steps);
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
          pair_tile<K>(y, y_stride, length, begin == 0, panels, d_w,
                       acts + t / kTokenTile * length * kTileBlockBytes,
                       steps + t / kTokenTile * length * D::kTileBlockSteps, row, valid, first + t,
                       static_cast<int>(std::min<int64_t>(kTokenTile, count - t)));
        }
      }
    }
  }
}

// amx_rows at the depth the activations allow.
template <class Source>
void amx_rows_of(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                 int64_t row_begin, int64_t row_end) {
  if (a.block_steps()) {
    amx_rows<Source, 2 * kActGroup>(y, y_stride, w, a, row_begin, row_end);
  } else {
    amx_rows<Source, kActGroup>(y, y_stride, w, a, row_begin, row_end);
  }
}

}  // namespace

void pq2_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                  int64_t row_begin, int64_t row_end) {
  if (panels_not_needed(y, y_stride, w, a, row_begin, row_end)) return;
  amx_rows_of<GatheredRows>(y, y_stride, w, a, row_begin, row_end);
}

void pq2_panel_form_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  const int64_t first = rows_before_whole_panels(pq2_rows_amx, y, y_stride, w, a, row_begin, row_end);
  if (first < row_end) amx_rows_of<StoredPanel>(y, y_stride, w, a, first, row_end);
}

}  // namespace tern::kernels::cpu
