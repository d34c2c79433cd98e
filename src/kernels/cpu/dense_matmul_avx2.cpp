// AVX2 dense row dot: eight weights per load (BF16 widened by a 16-bit shift, F16 by vcvtph2ps), four
// independent FMA chains; the tail goes through the scalar kernel.
#include <immintrin.h>

#include "kernels/cpu/dense_matmul.h"

namespace tern::kernels::cpu {

namespace {

__m256 load8(quant::TensorType type, const uint8_t* p) {
  if (type == quant::TensorType::kF32) return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if (type == quant::TensorType::kF16) return _mm256_cvtph_ps(half);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
}

float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace

float dense_dot_avx2(const MatrixView& w, int64_t row, const float* x) {
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
  float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  if (k < w.cols) {
    const MatrixView tail{w.type, r + k * width, w.cols - k, 1, w.row_bytes};
    sum += dense_dot_scalar(tail, 0, x + k);
  }
  return sum;
}

}  // namespace tern::kernels::cpu
