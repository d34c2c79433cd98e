// The x86 dense kernels' (dense_matmul.h) last step, shared so that they give the same bits: a row's four
// eight-lane chains over k mod 32 added pairwise, then across the lanes, then the scalar kernel over the
// columns from `done` on. Static for the reason lane_sum_x86.h gives.
#pragma once

#include <immintrin.h>

#include "kernels/cpu/dense_matmul.h"
#include "kernels/cpu/lane_sum_x86.h"

namespace tern::kernels::cpu {

static inline float dense_row_total(__m256 c0, __m256 c1, __m256 c2, __m256 c3, const MatrixView& w,
                                    const uint8_t* row, int64_t done, const float* x) {
  float sum = sum_of_lanes(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)));
  if (done < w.cols) {
    const int64_t width = w.type == quant::TensorType::kF32 ? 4 : 2;
    const MatrixView tail{w.type, row + done * width, w.cols - done, 1, w.row_bytes};
    sum += dense_dot_scalar(tail, 0, x + done);
  }
  return sum;
}

}  // namespace tern::kernels::cpu
