// AVX-VNNI PQ2_0 prompt kernel in group order, for CPUs with VNNI on ymm but no AVX-512 (Alder Lake and
// later client cores, Zen 5 client parts, Sierra Forest): pq2_rows_avx512_panels with 8-row panels. Each
// int32 lane of a ymm is one row, so a scale group's exact dot ends in its own lane, and the group order's
// convert, products, sums and FMA are one instruction for eight rows.
//
// Per token chunk, each panel's codes are expanded once: eight rows' 32 qs bytes of a block are eight ymm,
// transposed as 8 × 8 dwords, so vector q holds qs dword q of every row (no gathers, which are slow on
// some AVX2 cores); a shift and a mask per field then give, for group g and k = 4·h + s, the vector whose
// lane r holds field s of qs dword 2g + h of row r, the four codes that meet one dword of the digit planes,
// and one `vpdpbusd` (hi digits from 0, lo digits from the group's −Σ(256·hi + lo)) takes a broadcast of
// those four digits against eight rows. Panels go in pairs and tokens in twos (sixteen ymm registers: eight
// dot chains, two code vectors, two broadcasts); with block steps the chains run through the block, as in
// the AVX-512 kernel (the same time in L2 on Emerald Rapids). Bit-identical to pq2_rows_avx512_groups.
//
// Why AVX-VNNI only: with AVX2's `vpmaddubsw`, a group's products cost what they cost in the lane-order
// kernel (a `vpmaddubsw` and an int16 add per 32 products either way), and the expansion and group steps
// made the panels slower (27B pp128 with TERN_ISA=avx2, 12-01: 2.80 against 3.10 t/s).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/panel_rows.h"

namespace tern::kernels::cpu {

namespace {

inline __m256i broadcast_digits(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

struct Ymm8Panel {
  static constexpr int kRows = 8;  // one row per int32 lane of a ymm
  static constexpr int64_t kBlockBytes = kPanelGroups * kPanelGroupVectors * 32;
  // Sixteen ymm registers: eight dot chains, two code vectors, two broadcasts (three tokens spilled).
  static constexpr int kTokenTile = 2;

  // out[q] := dword q of every input row (lane r from in[r]).
  static void transpose_dwords(const __m256i (&in)[8], __m256i (&out)[8]) {
    __m256i lo32[4], hi32[4], quads[8];
    for (int i = 0; i < 4; ++i) {
      lo32[i] = _mm256_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
      hi32[i] = _mm256_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {
      // quads[4i + j]: dword j (and j + 4 in the high half) of rows 4i..4i + 3.
      quads[4 * i + 0] = _mm256_unpacklo_epi64(lo32[2 * i], lo32[2 * i + 1]);
      quads[4 * i + 1] = _mm256_unpackhi_epi64(lo32[2 * i], lo32[2 * i + 1]);
      quads[4 * i + 2] = _mm256_unpacklo_epi64(hi32[2 * i], hi32[2 * i + 1]);
      quads[4 * i + 3] = _mm256_unpackhi_epi64(hi32[2 * i], hi32[2 * i + 1]);
    }
    for (int j = 0; j < 4; ++j) {
      out[j] = _mm256_permute2x128_si256(quads[j], quads[4 + j], 0x20);
      out[j + 4] = _mm256_permute2x128_si256(quads[j], quads[4 + j], 0x31);
    }
  }

  // Expands rows [row, row + valid) (a short panel repeats its last row).
  static void expand(const TernaryMatrix& w, int64_t row, int valid, uint8_t* codes, float* d_w) {
    const __m256i low2 = _mm256_set1_epi8(3);
    const uint8_t* rows[kRows];
    for (int r = 0; r < kRows; ++r)
      rows[r] = w.data + static_cast<size_t>(row + std::min(r, valid - 1)) * w.row_bytes;
    for (int64_t b = 0; b < w.cols / kActBlock; ++b) {
      const int64_t at = b * static_cast<int64_t>(kPq2BlockBytes);
      alignas(16) uint16_t scale_bits[kRows];
      __m256i qs[kRows], dwords[kRows];
      for (int r = 0; r < kRows; ++r) {
        std::memcpy(&scale_bits[r], rows[r] + at, sizeof(uint16_t));
        qs[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[r] + at + 2));
      }
      _mm256_store_ps(d_w + b * kRows,
                      _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(scale_bits))));
      transpose_dwords(qs, dwords);
      for (int dword = 0; dword < 8; ++dword) {
        uint8_t* out = codes + b * kBlockBytes + panel_vector(dword, 0) * 32;
        for (int s = 0; s < 4; ++s)
          _mm256_store_si256(reinterpret_cast<__m256i*>(out + s * 32),
                             _mm256_and_si256(_mm256_srli_epi32(dwords[dword], 2 * s), low2));
      }
    }
  }

  // acc[t] += block × token t under block steps: fma((256·Hi + Lo)·s, d_w, acc), the group order's value.
  template <int T>
  static void finish_block(const __m256i (&dot_hi)[2][T], const __m256i (&dot_lo)[2][T],
                           const float* const d_w[2], const PanelTokenBlock tokens[T], float* const acc[T]) {
    for (int t = 0; t < T; ++t) {
      const __m256 step = _mm256_set1_ps(tokens[t].steps[0]);
      for (int p = 0; p < 2; ++p) {
        const __m256i dot = _mm256_add_epi32(_mm256_slli_epi32(dot_hi[p][t], 8), dot_lo[p][t]);
        float* out = acc[t] + p * kRows;
        _mm256_store_ps(out, _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(dot), step),
                                             _mm256_load_ps(d_w[p]), _mm256_load_ps(out)));
      }
    }
  }

  // acc[t] (two panels × 8 rows, in memory) += block b of a panel pair × T tokens in the group order:
  // per row and token fma((P0 + P1) + (P2 + P3), d_w, acc), as pq2_rows_avx512_groups rounds it.
  template <int T, bool kBlockSteps>
  static void pair_block(const uint8_t* const codes[2], const float* const d_w[2],
                         const PanelTokenBlock tokens[T], float* const acc[T]) {
    __m256 pair01[2][T], even[2][T];
    __m256i dot_hi[2][T], dot_lo[2][T];
#pragma GCC unroll 4
    for (int g = 0; g < kPanelGroups; ++g) {
      // Under block steps the chains run through the block from its −Σ(256·hi + lo) (|256·Σ hi| < 2^24).
      if (!kBlockSteps || g == 0) {
        for (int t = 0; t < T; ++t) {
          const __m256i neg_sum =
              _mm256_set1_epi32(kBlockSteps ? block_neg_sum(tokens[t]) : tokens[t].neg_sums[g]);
          for (int p = 0; p < 2; ++p) {
            dot_hi[p][t] = _mm256_setzero_si256();
            dot_lo[p][t] = neg_sum;
          }
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < kPanelGroupVectors; ++k) {
        const int offset = panel_digit_offset(g, k);
        const __m256i code0 =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(codes[0] + (g * kPanelGroupVectors + k) * 32));
        const __m256i code1 =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(codes[1] + (g * kPanelGroupVectors + k) * 32));
        for (int t = 0; t < T; ++t) {
          const __m256i hi = broadcast_digits(tokens[t].hi + offset);
          const __m256i lo = broadcast_digits(tokens[t].hi + kActBlock + offset);
          dot_hi[0][t] = _mm256_dpbusd_avx_epi32(dot_hi[0][t], code0, hi);
          dot_hi[1][t] = _mm256_dpbusd_avx_epi32(dot_hi[1][t], code1, hi);
          dot_lo[0][t] = _mm256_dpbusd_avx_epi32(dot_lo[0][t], code0, lo);
          dot_lo[1][t] = _mm256_dpbusd_avx_epi32(dot_lo[1][t], code1, lo);
        }
      }
      if constexpr (kBlockSteps) {
        if (g == kPanelGroups - 1) finish_block<T>(dot_hi, dot_lo, d_w, tokens, acc);
        continue;
      }
      for (int t = 0; t < T; ++t) {
        const __m256 step = _mm256_set1_ps(tokens[t].steps[2 * g]);
        for (int p = 0; p < 2; ++p) {
          const __m256i dot = _mm256_add_epi32(_mm256_slli_epi32(dot_hi[p][t], 8), dot_lo[p][t]);
          const __m256 product = _mm256_mul_ps(_mm256_cvtepi32_ps(dot), step);
          if (g % 2 == 0) {
            even[p][t] = product;
          } else if (g == 1) {
            pair01[p][t] = _mm256_add_ps(even[p][t], product);
          } else {
            const __m256 block = _mm256_add_ps(pair01[p][t], _mm256_add_ps(even[p][t], product));
            float* out = acc[t] + p * kRows;
            _mm256_store_ps(out, _mm256_fmadd_ps(block, _mm256_load_ps(d_w[p]), _mm256_load_ps(out)));
          }
        }
      }
    }
  }

  static void store(float* y, const float* acc, int valid) {
    if (valid == kRows) {
      _mm256_storeu_ps(y, _mm256_load_ps(acc));
      return;
    }
    for (int r = 0; r < valid; ++r) y[r] = acc[r];
  }
};

}  // namespace

void pq2_rows_avxvnni_panels(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  panel_rows<Ymm8Panel>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
