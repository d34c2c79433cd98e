// AVX-512 dense rows: the AVX2 kernel's four eight-lane chains a row as two zmm (k mod 32 in 0–15, in
// 16–31), four rows at a time so that each vector of x is loaded once for four rows. The lanes add and
// round as the AVX2 chains do, and the chains end through the same dense_row_total: the same bits.
#include <immintrin.h>

#include "kernels/cpu/dense_chains_x86.h"
#include "kernels/cpu/dense_matmul.h"

namespace tern::kernels::cpu {

namespace {

using quant::TensorType;

// Weights k .. k + 15 of a row as fp32.
template <TensorType kType>
__m512 load16(const uint8_t* row, int64_t k) {
  if constexpr (kType == TensorType::kF32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + k);
  } else {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k));
    if constexpr (kType == TensorType::kF16) return _mm512_cvtph_ps(half);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
  }
}

__m256 upper_half(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

// Rows r0 .. r0 + N − 1.
template <TensorType kType, int N>
void rows_n(float* y, const MatrixView& w, int64_t r0, const float* x) {
  const uint8_t* row[N];
  __m512 low[N], high[N];  // chains 0|1 and 2|3
  for (int n = 0; n < N; ++n) {
    row[n] = w.row(r0 + n);
    low[n] = high[n] = _mm512_setzero_ps();
  }
  int64_t k = 0;
  for (; k + 32 <= w.cols; k += 32) {
    const __m512 x_low = _mm512_loadu_ps(x + k), x_high = _mm512_loadu_ps(x + k + 16);
    for (int n = 0; n < N; ++n) {
      low[n] = _mm512_fmadd_ps(load16<kType>(row[n], k), x_low, low[n]);
      high[n] = _mm512_fmadd_ps(load16<kType>(row[n], k + 16), x_high, high[n]);
    }
  }
  for (int n = 0; n < N; ++n) {
    y[r0 + n] = dense_row_total(_mm512_castps512_ps256(low[n]), upper_half(low[n]),
                                _mm512_castps512_ps256(high[n]), upper_half(high[n]), w, row[n], k, x);
  }
}

template <TensorType kType>
void rows(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x) {
  int64_t r = row_begin;
  for (; r + 4 <= row_end; r += 4) rows_n<kType, 4>(y, w, r, x);
  for (; r < row_end; ++r) rows_n<kType, 1>(y, w, r, x);
}

}  // namespace

void dense_rows_avx512(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x) {
  switch (w.type) {
    case TensorType::kF32:
      return rows<TensorType::kF32>(y, w, row_begin, row_end, x);
    case TensorType::kF16:
      return rows<TensorType::kF16>(y, w, row_begin, row_end, x);
    default:
      return rows<TensorType::kBF16>(y, w, row_begin, row_end, x);
  }
}

}  // namespace tern::kernels::cpu
