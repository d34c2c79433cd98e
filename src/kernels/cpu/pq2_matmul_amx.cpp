// AMX-INT8 PQ2_0 × two-digit int8 kernel for prefill. One TDPBSSD multiplies a 16-token × 32-value
// activation tile (one scale group, signed digits) by a 16-row weight panel of code − 1 (signed, so the
// "− Σ x" term is inside the product), giving the exact integers Σ (code − 1)·digit per (token, row,
// group) that the VNNI path sums per lane. The hi and lo digits go to two accumulator tiles; after each
// 128-block the eight tiles are stored and AVX-512 combines 256·hi + lo, converts, scales by the groups'
// steps and the rows' d_w and accumulates in fp32.
//
// Per call: the activations of a token chunk are copied once into natural element order per group
// (A tiles read 32 contiguous bytes per token), each 16-row panel's weights are expanded once per chunk
// into TDPBSSD's B layout (row r of a group's tile holds, for each of the 16 rows, the codes of values
// 4r..4r+3, i.e. one qs byte) and reused by every 16-token tile of the chunk. Both live in per-thread
// scratch that grows on first use only. Every (row, token) output is computed by the same arithmetic
// whatever panel or tile holds it (short panels and token tiles are padded), so results do not depend
// on how rows are split over threads.
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kPanelRows = 16;  // weight rows per panel: the 16 int32 columns of an accumulator tile
constexpr int kTokenTile = 16;  // tokens per activation tile
constexpr int kGroupBytes = static_cast<int>(kActGroup);  // K per TDPBSSD: one scale group
constexpr int kGroups = static_cast<int>(kActBlock / kActGroup);
constexpr int64_t kPanelGroupBytes = kGroupBytes * kPanelRows;    // one B tile: 8 rows × 64 bytes
constexpr int64_t kPanelBlockBytes = kGroups * kPanelGroupBytes;  // 2 KiB per panel and block
// The activation copy of one token chunk stays in L2 while the chunk sweeps the thread's panels.
constexpr int64_t kChunkBytes = int64_t{1} << 20;

// Tiles: two sets of {weights, hi digits, lo digits, dots} (0..3 and 4..7); the four groups of a block
// alternate between them so that a group's loads and products need not wait for the previous group's
// stores.
amx::TileConfig tile_config() {
  amx::TileConfig config;
  for (int set = 0; set < 2; ++set) {
    config.set(4 * set, kGroupBytes / 4, amx::kMaxTileBytes);
    config.set(4 * set + 1, kTokenTile, kGroupBytes);
    config.set(4 * set + 2, kTokenTile, kGroupBytes);
    config.set(4 * set + 3, kTokenTile, amx::kMaxTileBytes);
  }
  return config;
}

// A 64-byte aligned array that only ever grows.
template <class T>
class Scratch {
 public:
  T* at_least(size_t count) {
    if (count > capacity_) {
      const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
      void* p = std::aligned_alloc(64, bytes);
      if (p == nullptr) throw std::bad_alloc();
      data_.reset(static_cast<T*>(p));
      capacity_ = count;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t capacity_ = 0;
};

struct ThreadScratch {
  Scratch<int8_t> acts;   // [padded tokens][blocks][hi 128 | lo 128], natural element order
  Scratch<float> steps;   // [padded tokens][blocks][4 groups]
  Scratch<int8_t> panel;  // [blocks][4 groups][8][64]: code − 1 in B layout
  Scratch<float> d_w;     // [blocks][16 rows]
};

// Copies tokens [first, first + count) of `a` to natural order, zero-padded to a whole number of tiles.
void copy_acts(const QuantizedActs& a, int64_t first, int64_t count, int64_t padded, int8_t* acts,
               float* steps) {
  const int64_t blocks = a.blocks();
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
    int8_t* out = acts + t * blocks * kActBlockBytes;
    for (int64_t b = 0; b < blocks * 2; ++b) {  // hi plane, then lo plane, of each block
      const __m512i lower = _mm512_loadu_si512(q + b * kActBlock);
      const __m512i upper = _mm512_loadu_si512(q + b * kActBlock + 64);
      _mm512_storeu_si512(out + b * kActBlock, _mm512_permutex2var_epi8(lower, order0, upper));
      _mm512_storeu_si512(out + b * kActBlock + 64, _mm512_permutex2var_epi8(lower, order1, upper));
    }
    // zmm lane 2g covers group g.
    for (int64_t b = 0; b < blocks; ++b)
      for (int g = 0; g < kGroups; ++g) steps[(t * blocks + b) * kGroups + g] = scales[b * kZmmLanes + 2 * g];
  }
  std::memset(acts + count * blocks * kActBlockBytes, 0,
              static_cast<size_t>((padded - count) * blocks * kActBlockBytes));
  std::memset(steps + count * blocks * kGroups, 0,
              static_cast<size_t>((padded - count) * blocks * kGroups) * 4);
}

// Expands rows [row, row + valid) into B tiles (a short panel repeats its last row) and their d_w.
void unpack_panel(const Pq2Matrix& w, int64_t row, int valid, int8_t* panel, float* d_w) {
  alignas(64) int32_t offsets[kPanelRows];
  for (int n = 0; n < kPanelRows; ++n)
    offsets[n] = static_cast<int32_t>(std::min(n, valid - 1)) * static_cast<int32_t>(w.row_bytes);
  const __m512i rows = _mm512_load_si512(offsets);
  // Within each qword (rows 2q and 2q + 1, one gathered dword each), output byte 4h + j of row 2q + h
  // takes bits 2j.. of byte k of the row's dword.
  __m512i select[4];
  for (int k = 0; k < 4; ++k) {
    uint64_t bits = 0;
    for (int byte = 0; byte < 8; ++byte)
      bits |= static_cast<uint64_t>(32 * (byte / 4) + 8 * k + 2 * (byte % 4)) << (8 * byte);
    select[k] = _mm512_set1_epi64(static_cast<long long>(bits));
  }
  const __m512i low2 = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
  const uint8_t* base = w.data + static_cast<size_t>(row) * w.row_bytes;
  for (int64_t b = 0; b < w.cols / kActBlock; ++b) {
    const uint8_t* block = base + b * static_cast<int64_t>(kPq2BlockBytes);
    const __m512i scale_bits = _mm512_i32gather_epi32(rows, block, 1);  // low 16 bits: fp16 d
    _mm512_store_ps(d_w + b * kPanelRows, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(scale_bits)));
    int8_t* out = panel + b * kPanelBlockBytes;
    for (int i = 0; i < 32; i += 4) {  // qs bytes i..i+3 of the 16 rows
      const __m512i qs = _mm512_i32gather_epi32(rows, block + 2 + i, 1);
      for (int k = 0; k < 4; ++k) {
        const int g = (i + k) / 8, r = (i + k) % 8;
        const __m512i codes = _mm512_and_si512(_mm512_multishift_epi64_epi8(select[k], qs), low2);
        _mm512_store_si512(out + g * kPanelGroupBytes + r * 64, _mm512_sub_epi8(codes, one));
      }
    }
  }
}

// The hi and lo dots of group g of one block into dots[g], through tiles 0..3 (even groups) or 4..7 (odd
// groups). GCC's tile intrinsics paste the tile number into the instruction text, so it must be a literal.
void group_dots_even(const int8_t* weights, const int8_t* hi, const int8_t* lo, int64_t stride, int g,
                     int32_t (*dots)[2][kTokenTile][16]) {
  _tile_loadd(0, weights + g * kPanelGroupBytes, 64);
  _tile_loadd(1, hi + g * kGroupBytes, stride);
  _tile_loadd(2, lo + g * kGroupBytes, stride);
  _tile_zero(3);
  _tile_dpbssd(3, 1, 0);
  _tile_stored(3, dots[g][0], 64);
  _tile_zero(3);
  _tile_dpbssd(3, 2, 0);
  _tile_stored(3, dots[g][1], 64);
}

void group_dots_odd(const int8_t* weights, const int8_t* hi, const int8_t* lo, int64_t stride, int g,
                    int32_t (*dots)[2][kTokenTile][16]) {
  _tile_loadd(4, weights + g * kPanelGroupBytes, 64);
  _tile_loadd(5, hi + g * kGroupBytes, stride);
  _tile_loadd(6, lo + g * kGroupBytes, stride);
  _tile_zero(7);
  _tile_dpbssd(7, 5, 4);
  _tile_stored(7, dots[g][0], 64);
  _tile_zero(7);
  _tile_dpbssd(7, 6, 4);
  _tile_stored(7, dots[g][1], 64);
}

// y for one panel (`valid` rows from `row`) and one token tile (`tokens` real ones from `token`).
void panel_tile(float* y, int64_t y_stride, int64_t blocks, const int8_t* panel, const float* d_w,
                const int8_t* acts, const float* steps, int64_t row, int valid, int64_t token, int tokens) {
  const int64_t stride = blocks * kActBlockBytes;        // bytes per token in the activation copy
  alignas(64) int32_t dots[kGroups][2][kTokenTile][16];  // per group: hi, lo
  __m512 acc[kTokenTile];
  for (__m512& v : acc) v = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const int8_t* weights = panel + b * kPanelBlockBytes;
    const int8_t* hi = acts + b * kActBlockBytes;
    const int8_t* lo = hi + kActBlock;
    group_dots_even(weights, hi, lo, stride, 0, dots);
    group_dots_odd(weights, hi, lo, stride, 1, dots);
    group_dots_even(weights, hi, lo, stride, 2, dots);
    group_dots_odd(weights, hi, lo, stride, 3, dots);
    const __m512 scale = _mm512_load_ps(d_w + b * kPanelRows);
    for (int m = 0; m < kTokenTile; ++m) {
      const float* step = steps + (m * blocks + b) * kGroups;
      __m512 sum = _mm512_setzero_ps();
      for (int g = 0; g < kGroups; ++g) {
        const __m512i dot = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(dots[g][0][m]), 8),
                                             _mm512_load_si512(dots[g][1][m]));
        sum = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(step[g]), sum);
      }
      acc[m] = _mm512_fmadd_ps(sum, scale, acc[m]);
    }
  }
  const __mmask16 rows = static_cast<__mmask16>((1u << valid) - 1u);
  for (int m = 0; m < tokens; ++m) _mm512_mask_storeu_ps(y + (token + m) * y_stride + row, rows, acc[m]);
}

}  // namespace

void pq2_rows_amx(float* y, int64_t y_stride, const Pq2Matrix& w, const QuantizedActs& a, int64_t row_begin,
                  int64_t row_end) {
  if (row_begin >= row_end || a.n_tokens == 0) return;
  if (w.row_bytes > static_cast<size_t>(std::numeric_limits<int32_t>::max() / kPanelRows)) {
    pq2_rows_avx512(y, y_stride, w, a, row_begin, row_end);  // panel rows beyond a 32-bit gather offset
    return;
  }
  thread_local ThreadScratch scratch;
  const int64_t blocks = a.blocks();
  const int64_t per_token = blocks * kActBlockBytes;
  const int64_t chunk = std::max<int64_t>(kTokenTile, kChunkBytes / per_token / kTokenTile * kTokenTile);
  const int64_t chunk_tokens = std::min(chunk, (a.n_tokens + kTokenTile - 1) / kTokenTile * kTokenTile);
  int8_t* acts = scratch.acts.at_least(static_cast<size_t>(chunk_tokens * per_token));
  float* steps = scratch.steps.at_least(static_cast<size_t>(chunk_tokens * blocks * kGroups));
  int8_t* panel = scratch.panel.at_least(static_cast<size_t>(blocks * kPanelBlockBytes));
  float* d_w = scratch.d_w.at_least(static_cast<size_t>(blocks * kPanelRows));

  const amx::TileConfig config = tile_config();
  const amx::TileScope tiles(config);
  for (int64_t first = 0; first < a.n_tokens; first += chunk) {
    const int64_t count = std::min(chunk, a.n_tokens - first);
    const int64_t padded = (count + kTokenTile - 1) / kTokenTile * kTokenTile;
    copy_acts(a, first, count, padded, acts, steps);
    for (int64_t row = row_begin; row < row_end; row += kPanelRows) {
      const int valid = static_cast<int>(std::min<int64_t>(kPanelRows, row_end - row));
      unpack_panel(w, row, valid, panel, d_w);
      for (int64_t t = 0; t < padded; t += kTokenTile) {
        panel_tile(y, y_stride, blocks, panel, d_w, acts + t * per_token, steps + t * blocks * kGroups, row,
                   valid, first + t, static_cast<int>(std::min<int64_t>(kTokenTile, count - t)));
      }
    }
  }
}

}  // namespace tern::kernels::cpu
