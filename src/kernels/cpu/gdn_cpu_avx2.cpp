// AVX2 + FMA twins of gdn_cpu.cpp's kernels (compiled with -mavx2 -mfma -mf16c).
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/gdn_dot.h"

namespace tern::kernels::cpu {

namespace {

// The recurrent form for the 8·kVectors state columns from j0, every token.
template <int kVectors>
void recurrent_vectors(const GdnHead& h, int64_t j0) {
  for (int64_t t = 0; t < h.n_tokens; ++t) {
    const float* q = h.q + t * h.qk_stride;
    const float* k = h.k + t * h.qk_stride;
    const float decay_f = std::exp(h.g[t * h.gate_stride]);
    const __m256 decay = _mm256_set1_ps(decay_f);
    const __m256 beta = _mm256_set1_ps(h.beta[t * h.gate_stride]);
    const __m256 kq = _mm256_set1_ps(gdn_dot(k, q, h.dk));
    __m256 r[kVectors];
    __m256 p[kVectors];
    for (int n = 0; n < kVectors; ++n) r[n] = p[n] = _mm256_setzero_ps();
    for (int64_t i = 0; i < h.dk; ++i) {
      const float* s = h.state + i * h.dv + j0;
      const __m256 ki = _mm256_broadcast_ss(k + i);
      const __m256 qi = _mm256_broadcast_ss(q + i);
      for (int n = 0; n < kVectors; ++n) {
        const __m256 x = _mm256_loadu_ps(s + 8 * n);
        r[n] = _mm256_fmadd_ps(ki, x, r[n]);
        p[n] = _mm256_fmadd_ps(qi, x, p[n]);
      }
    }
    const float* v = h.v + t * h.v_stride + j0;
    float* o = h.out + t * h.v_stride + j0;
    __m256 delta[kVectors];
    for (int n = 0; n < kVectors; ++n) {
      delta[n] = _mm256_mul_ps(beta, _mm256_fnmadd_ps(decay, r[n], _mm256_loadu_ps(v + 8 * n)));
      _mm256_storeu_ps(o + 8 * n, _mm256_fmadd_ps(decay, p[n], _mm256_mul_ps(kq, delta[n])));
    }
    for (int64_t i = 0; i < h.dk; ++i) {
      float* s = h.state + i * h.dv + j0;
      const __m256 ki = _mm256_broadcast_ss(k + i);
      for (int n = 0; n < kVectors; ++n) {
        const __m256 x = _mm256_loadu_ps(s + 8 * n);
        _mm256_storeu_ps(s + 8 * n, _mm256_fmadd_ps(ki, delta[n], _mm256_mul_ps(decay, x)));
      }
    }
  }
}

void recurrent_columns_avx2(const GdnHead& h, int64_t j0, int64_t j1) {
  if (j1 - j0 == 32) {
    recurrent_vectors<4>(h, j0);
    return;
  }
  int64_t j = j0;
  for (; j + 8 <= j1; j += 8) recurrent_vectors<1>(h, j);
  if (j < j1) gdn_kernels_scalar().recurrent_columns(h, j, j1);
}

}  // namespace

const GdnKernels& gdn_kernels_avx2() {
  static_assert(kColumnBlock == 32, "recurrent_columns_avx2 takes whole blocks as 4 vectors");
  static constexpr GdnKernels kKernels{"avx2", kColumnBlock, recurrent_columns_avx2};
  return kKernels;
}

}  // namespace tern::kernels::cpu
