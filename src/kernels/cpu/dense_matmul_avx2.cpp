// AVX2 dense rows: eight weights per load (BF16 widened by a 16-bit shift, F16 by vcvtph2ps), four
// independent FMA chains a row; the tail goes through the scalar kernel.
#include <immintrin.h>

#include "kernels/cpu/dense_chains_x86.h"
#include "kernels/cpu/dense_matmul.h"

namespace tern::kernels::cpu {

namespace {

__m256 load8(quant::TensorType type, const uint8_t* p) {
  if (type == quant::TensorType::kF32) return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if (type == quant::TensorType::kF16) return _mm256_cvtph_ps(half);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
}

float dot(const MatrixView& w, int64_t row, const float* x) {
  const uint8_t* r = w.row(row);
  const int64_t width = w.type == quant::TensorType::kF32 ? 4 : 2;
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t k = 0;
  for (; k + 32 <= w.cols; k += 32) {
    for (int j = 0; j < 4; ++j) {
      acc[j] =
          _mm256_fmadd_ps(load8(w.type, r + (k + 8 * j) * width), _mm256_loadu_ps(x + k + 8 * j), acc[j]);
    }
  }
  return dense_row_total(acc[0], acc[1], acc[2], acc[3], w, r, k, x);
}

}  // namespace

void dense_rows_avx2(float* y, const MatrixView& w, int64_t row_begin, int64_t row_end, const float* x) {
  for (int64_t r = row_begin; r < row_end; ++r) y[r] = dot(w, r, x);
}

}  // namespace tern::kernels::cpu
