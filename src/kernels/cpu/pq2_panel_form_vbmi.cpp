// The decode kernel of PQ2_0 panels (pq2_panel_form.h), AVX-512 VBMI + VNNI, in the block order
// (panel_blocks_avx512.h). Row r of a panel is int32 lane r of every vector; the panel is read as it is
// stored, a block's eight code vectors (code vector q: qs bytes 4q..4q+3 of every field) one after another,
// straight from memory to the products.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/panel_blocks_avx512.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "kernels/cpu/prefetch_ahead.h"
#include "quant/pq2_panels.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kRows = static_cast<int>(quant::kPq2PanelRows);
constexpr int kVectors = static_cast<int>(quant::kPq2PanelDwords);  // code vectors a block
constexpr int kTokenTile = 2;
// The next panels are requested into L2 this far ahead of the codes being read, a fixed nine lines a
// block (no loop whose trip count varies), so the stream does not wait on the hardware prefetcher, which
// restarts at every 4 KiB page. Zen 4, two threads from DRAM (12-01): 16 KiB into L2 1.3-1.5x faster than
// none; 4 KiB into L1 (32 KiB there) no faster than none; 64 KiB into L2 the same as 16.
constexpr int64_t kPrefetchBytes = 16 * 1024;
constexpr int kPrefetchLines = 9;  // ≥ the 8.5 lines of a 16-row block

struct PanelStream {
  const uint8_t* scales;
  const uint8_t* codes;
  const uint8_t* prefetch_end;  // the end of the caller's rows: nothing past it is requested
};

// GCC folds a plain load into each of the four shifts and masks that take the fields: four 64-byte loads
// a code vector instead of one, 1.1-1.2x slower in L2 (Zen 5, 12-02). The empty asm keeps one load.
inline __m512i load_into_register(const uint8_t* p) {
  __m512i v = _mm512_loadu_si512(p);
  asm("" : "+v"(v));
  return v;
}

// out[t][r] = row r of the panel · token `token` + t, T tokens, block steps.
template <int T, avx512::FieldOps Ops>
void panel_tokens(const PanelStream& panel, int64_t blocks, size_t panel_bytes, const QuantizedActs& a,
                  int64_t token, float out[T][kRows]) {
  __m512 acc[T];
  for (__m512& sum : acc) sum = _mm512_setzero_ps();
  const int64_t block_stride = static_cast<int64_t>(panel_bytes) / blocks;
  for (int64_t b = 0; b < blocks; ++b) {
    prefetch_lines(panel.scales + kPrefetchBytes + b * block_stride, kPrefetchLines, panel.prefetch_end);
    const int8_t* digits[T];
    avx512::BlockChains chains[T];
    for (int t = 0; t < T; ++t) {
      digits[t] = a.token_q(token + t) + b * kActBlockBytes;
      chains[t].start(avx512::block_neg_sum(a.token_ymm_neg_sums(token + t) + b * kYmmLanes));
    }
#pragma GCC unroll 8
    for (int q = 0; q < kVectors; ++q) {
      __m512i code[4];
      avx512::panel_fields<Ops>(load_into_register(panel.codes + (b * kVectors + q) * 64), code);
      for (int t = 0; t < T; ++t) chains[t].add(code, digits[t] + 4 * q);
    }
    const __m512 d_w =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel.scales + 32 * b)));
    for (int t = 0; t < T; ++t)
      acc[t] =
          avx512::block_scaled(acc[t], chains[t].dot(), a.token_ymm_scales(token + t)[b * kYmmLanes], d_w);
  }
  for (int t = 0; t < T; ++t) _mm512_storeu_ps(out[t], acc[t]);
}

// Activations with group steps (not a decode token's here) take the group order's kernel, the same order.
template <avx512::FieldOps Ops>
void rows_blocks(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                 int64_t row_begin, int64_t row_end) {
  if (!a.block_steps()) {
    pq2_panel_form_rows_groups(y, y_stride, w, a, row_begin, row_end);
    return;
  }
  const int64_t aligned =
      rows_before_whole_panels(pq2_decode_kernel(), y, y_stride, w, a, row_begin, row_end);
  if (aligned >= row_end) return;
  const int64_t blocks = a.blocks();
  const size_t panel_bytes = quant::pq2_panel_bytes(w.cols);
  const size_t scale_bytes = quant::pq2_panel_scale_bytes(w.cols);
  const int64_t first_panel = aligned / kRows, end_panel = (row_end + kRows - 1) / kRows;
  const uint8_t* prefetch_end = w.data + static_cast<size_t>(end_panel) * panel_bytes;
  for (int64_t p = first_panel; p < end_panel; ++p) {
    const uint8_t* base = w.data + static_cast<size_t>(p) * panel_bytes;
    const PanelStream panel{base, base + scale_bytes, prefetch_end};
    const int64_t row = p * kRows;
    const __mmask16 valid = static_cast<__mmask16>((1u << std::min<int64_t>(kRows, row_end - row)) - 1u);
    int64_t t = 0;
    alignas(64) float out[kTokenTile][kRows];
    for (; t + kTokenTile <= a.n_tokens; t += kTokenTile) {
      panel_tokens<kTokenTile, Ops>(panel, blocks, panel_bytes, a, t, out);
      for (int i = 0; i < kTokenTile; ++i)
        _mm512_mask_storeu_ps(y + (t + i) * y_stride + row, valid, _mm512_load_ps(out[i]));
    }
    if (t < a.n_tokens) {
      panel_tokens<1, Ops>(panel, blocks, panel_bytes, a, t, out);
      _mm512_mask_storeu_ps(y + t * y_stride + row, valid, _mm512_load_ps(out[0]));
    }
  }
}

}  // namespace

void pq2_panel_form_rows_blocks_shifts(float* y, int64_t y_stride, const TernaryMatrix& w,
                                       const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  rows_blocks<avx512::FieldOps::kShifts>(y, y_stride, w, a, row_begin, row_end);
}

void pq2_panel_form_rows_blocks_affine(float* y, int64_t y_stride, const TernaryMatrix& w,
                                       const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  rows_blocks<avx512::FieldOps::kAffine>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
