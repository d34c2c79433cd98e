// AVX-512 VBMI + VNNI kernels for trit panels (trit_panels.h, quant/trit_panels.h): the decode kernel, in
// the block order of the PQ2_0 panels' (panel_blocks_avx512.h), and the expansion to PQ2_0 panels for
// prompt tokens.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/panel_blocks_avx512.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "kernels/cpu/pq2_slabs.h"
#include "kernels/cpu/prefetch_ahead.h"
#include "kernels/cpu/trit_lookups_vbmi.h"
#include "kernels/cpu/trit_panels.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kRows = static_cast<int>(quant::kPq2PanelRows);
constexpr int kVectors = static_cast<int>(quant::kPq2PanelDwords);  // qs dwords (code vectors) a block
constexpr int kFields = 4;
constexpr int kTokenTile = 2;
constexpr int64_t kUnitBlocks = quant::kTritPanelBlocksPerUnit;
constexpr size_t kSourceBytes = quant::kPq2PanelVectorBytes;
// As pq2_panel_form_vbmi.cpp: the stream's next 16 KiB requested into L2 as this panel is read.
constexpr int64_t kPrefetchBytes = 16 * 1024;

// One panel of a trit-panel matrix.
struct TritPanel {
  const uint8_t* scales;
  const uint8_t* sources;
  int64_t blocks;
};

// The four fields of qs dword q for the blocks of unit `unit`: fields[s][j] is block 5·unit + j's (slots
// past the row's last block hold code 0).
inline void unit_fields(const TritPanel& panel, int64_t unit, int q, const TritTables& tables,
                        __m512i (&fields)[kFields][kUnitBlocks]) {
  const uint8_t* source =
      panel.sources + kSourceBytes * (quant::kTritPanelSourcesPerUnit * unit + kFields * q);
  for (int s = 0; s < kFields; ++s)
    extract_bytes(_mm512_loadu_si512(source + kSourceBytes * s), tables, fields[s]);
}

// acc[t] += the C blocks of unit `unit` · token `token` + t, block steps: each block's digit sums in
// integers over the unit's sources, then scaled once (avx512::block_scaled), the PQ2_0 panel kernel's
// value on the same codes, so the same bits. The unit's sources are expanded once for the T tokens, one
// source (one field of the C blocks) at a time into the blocks' chains, which are exact in any order.
template <int C, int T>
inline void unit_steps(const TritPanel& panel, int64_t unit, const QuantizedActs& a, int64_t token,
                       const TritTables& tables, __m512 (&acc)[T]) {
  const int64_t first = kUnitBlocks * unit;
  const int8_t* q8[T];
  __m512i hi[T][C], lo[T][C];
  for (int t = 0; t < T; ++t) {
    q8[t] = a.token_q(token + t) + first * kActBlockBytes;
    for (int j = 0; j < C; ++j) {
      hi[t][j] = _mm512_setzero_si512();
      lo[t][j] =
          _mm512_set1_epi32(avx512::block_neg_sum(a.token_ymm_neg_sums(token + t) + (first + j) * kYmmLanes));
    }
  }
  for (int q = 0; q < kVectors; ++q) {
    const uint8_t* source =
        panel.sources + kSourceBytes * (quant::kTritPanelSourcesPerUnit * unit + kFields * q);
    for (int s = 0; s < kFields; ++s) {
      __m512i field[kUnitBlocks];
      extract_bytes(_mm512_loadu_si512(source + kSourceBytes * s), tables, field);
      for (int t = 0; t < T; ++t) {
        for (int j = 0; j < C; ++j) {
          const int8_t* hi_d = q8[t] + j * kActBlockBytes + 4 * q + 32 * s;
          hi[t][j] = avx512::dpbusd_bcast(hi[t][j], field[j], hi_d);
          lo[t][j] = avx512::dpbusd_bcast(lo[t][j], field[j], hi_d + kActBlock);
        }
      }
    }
  }
  for (int j = 0; j < C; ++j) {
    const __m512 d_w = _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel.scales + 2 * kRows * (first + j))));
    for (int t = 0; t < T; ++t) {
      acc[t] = avx512::block_scaled(acc[t], avx512::joined_digits(hi[t][j], lo[t][j]),
                                    a.token_ymm_scales(token + t)[(first + j) * kYmmLanes], d_w);
    }
  }
}

// Row r of the panel · token `token` + t, in out[t][r].
template <int T>
void panel_tokens(const TritPanel& panel, const uint8_t* prefetch_end, size_t panel_bytes,
                  const QuantizedActs& a, int64_t token, const TritTables& tables, float out[T][kRows]) {
  __m512 acc[T];
  for (__m512& sum : acc) sum = _mm512_setzero_ps();
  const int64_t units = (panel.blocks + kUnitBlocks - 1) / kUnitBlocks;
  const int64_t unit_stride = static_cast<int64_t>(panel_bytes) / units;
  const int64_t unit_lines = (unit_stride + 127) / 64;
  for (int64_t u = 0; u < units; ++u) {
    // This unit's share of the stream, a line more for the rounding, kPrefetchBytes ahead.
    prefetch_lines(panel.scales + kPrefetchBytes + u * unit_stride, unit_lines, prefetch_end);
    switch (std::min(kUnitBlocks, panel.blocks - kUnitBlocks * u)) {
      case 5:
        unit_steps<5, T>(panel, u, a, token, tables, acc);
        break;
      case 4:
        unit_steps<4, T>(panel, u, a, token, tables, acc);
        break;
      case 3:
        unit_steps<3, T>(panel, u, a, token, tables, acc);
        break;
      case 2:
        unit_steps<2, T>(panel, u, a, token, tables, acc);
        break;
      default:
        unit_steps<1, T>(panel, u, a, token, tables, acc);
        break;
    }
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(out[t], acc[t]);
}

// Panels [first, last) of w as PQ2_0 panels at out: the same scales, each code vector the OR of its four
// expanded fields (codes are < 4, so a 16-bit shift keeps each in its byte).
void expand_to_pq2_panels(const TernaryMatrix& w, int64_t first, int64_t last, uint8_t* out) {
  const TritTables& tables = plane_tables();
  const int64_t blocks = w.cols / kActBlock;
  const size_t scale_bytes = quant::pq2_panel_scale_bytes(w.cols);
  const size_t trit_bytes = quant::trit_panel_bytes(w.cols), pq2_bytes = quant::pq2_panel_bytes(w.cols);
  for (int64_t p = first; p < last; ++p) {
    const uint8_t* src = w.data + static_cast<size_t>(p) * trit_bytes;
    uint8_t* dst = out + static_cast<size_t>(p - first) * pq2_bytes;
    std::memcpy(dst, src, scale_bytes);
    const TritPanel panel{src, src + scale_bytes, blocks};
    for (int64_t u = 0; u * kUnitBlocks < blocks; ++u) {
      for (int q = 0; q < kVectors; ++q) {
        __m512i fields[kFields][kUnitBlocks];
        unit_fields(panel, u, q, tables, fields);
        for (int64_t j = 0; j < std::min(kUnitBlocks, blocks - kUnitBlocks * u); ++j) {
          const __m512i codes = _mm512_or_si512(
              _mm512_or_si512(fields[0][j], _mm512_slli_epi16(fields[1][j], 2)),
              _mm512_or_si512(_mm512_slli_epi16(fields[2][j], 4), _mm512_slli_epi16(fields[3][j], 6)));
          const int64_t vector = quant::kPq2PanelDwords * (kUnitBlocks * u + j) + q;
          _mm512_storeu_si512(dst + scale_bytes + kSourceBytes * static_cast<size_t>(vector), codes);
        }
      }
    }
  }
}

}  // namespace

// Activations with group steps (not a decode token's here) take the prompt kernel, the same order.
void trit_panels_rows_blocks(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  if (!a.block_steps()) {
    trit_panels_rows_prompt_vbmi(y, y_stride, w, a, row_begin, row_end);
    return;
  }
  // The matmul splits rows by whole panels; a range that starts inside one takes its first rows through
  // the re-pack, with the row kernel of the same order.
  const int64_t aligned = std::min(row_end, (row_begin + kRows - 1) / kRows * kRows);
  rows_via_pq2(trit_panels_to_pq2, pq2_decode_kernel(), y, y_stride, w, a, row_begin, aligned);
  if (aligned >= row_end || a.n_tokens == 0) return;
  const TritTables& tables = plane_tables();
  const int64_t blocks = a.blocks();
  const size_t panel_bytes = quant::trit_panel_bytes(w.cols);
  const size_t scale_bytes = quant::pq2_panel_scale_bytes(w.cols);
  const int64_t first_panel = aligned / kRows, end_panel = (row_end + kRows - 1) / kRows;
  const uint8_t* prefetch_end = w.data + static_cast<size_t>(end_panel) * panel_bytes;
  for (int64_t p = first_panel; p < end_panel; ++p) {
    const uint8_t* base = w.data + static_cast<size_t>(p) * panel_bytes;
    const TritPanel panel{base, base + scale_bytes, blocks};
    const int64_t row = p * kRows;
    const auto valid = static_cast<__mmask16>((1u << std::min<int64_t>(kRows, row_end - row)) - 1u);
    // Tokens kTokenTile at a time, each source expanded once for the tile; the panel (tens of KiB) is
    // in L2 for the next tile.
    int64_t t = 0;
    alignas(64) float out[kTokenTile][kRows];
    for (; t + kTokenTile <= a.n_tokens; t += kTokenTile) {
      panel_tokens<kTokenTile>(panel, prefetch_end, panel_bytes, a, t, tables, out);
      for (int i = 0; i < kTokenTile; ++i)
        _mm512_mask_storeu_ps(y + (t + i) * y_stride + row, valid, _mm512_load_ps(out[i]));
    }
    if (t < a.n_tokens) {
      panel_tokens<1>(panel, prefetch_end, panel_bytes, a, t, tables, out);
      _mm512_mask_storeu_ps(y + t * y_stride + row, valid, _mm512_load_ps(out[0]));
    }
  }
}

void trit_panels_rows_prompt_vbmi(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                                  int64_t row_begin, int64_t row_end) {
  constexpr int64_t kSlabPanels = 64;
  if (row_begin >= row_end) return;
  const Pq2RowsKernel kernel = pq2_panel_form_prompt_kernel(a.n_tokens);
  const size_t pq2_bytes = quant::pq2_panel_bytes(w.cols);
  const int64_t first_panel = row_begin / kRows, end_panel = (row_end + kRows - 1) / kRows;
  thread_local GrowBuffer<uint8_t> scratch;
  uint8_t* slab =
      scratch.at_least(pq2_bytes * static_cast<size_t>(std::min(kSlabPanels, end_panel - first_panel)));
  for (int64_t first = first_panel; first < end_panel; first += kSlabPanels) {
    const int64_t last = std::min(end_panel, first + kSlabPanels);
    expand_to_pq2_panels(w, first, last, slab);
    const int64_t base = first * kRows;
    const TernaryMatrix panels{slab, std::min(w.rows, last * kRows) - base, w.cols,
                               static_cast<size_t>(w.cols / kActBlock) * kPq2BlockBytes,
                               quant::TensorType::kPq2Panels};
    kernel(y + base, y_stride, panels, a, std::max(row_begin, base) - base,
           std::min(row_end, last * kRows) - base);
  }
}

}  // namespace tern::kernels::cpu
