// AVX-512 twin of gdn_cpu.cpp's recurrence (compiled for AVX-512): a task is a 128-column slab, the whole
// of a 27B head, whose r and p fit in sixteen zmm registers. The sweep then reads the head's state as one
// sequential 64 KiB stream, where the 32-column AVX2 blocks read it as 128-byte pieces at a 512-byte
// stride that the prefetchers follow badly. Per column the operations are the AVX2 kernel's, in the same
// order, and k·q is summed the same way, so the two give the same bits.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/gdn_dot.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kVectors = kSlabColumns / 16;

void recurrent_slab(const GdnHead& h, int64_t j0) {
  for (int64_t t = 0; t < h.n_tokens; ++t) {
    const float* q = h.q + t * h.qk_stride;
    const float* k = h.k + t * h.qk_stride;
    const __m512 decay = _mm512_set1_ps(std::exp(h.g[t * h.gate_stride]));
    const __m512 beta = _mm512_set1_ps(h.beta[t * h.gate_stride]);
    const __m512 kq = _mm512_set1_ps(gdn_dot(k, q, h.dk));
    __m512 r[kVectors];
    __m512 p[kVectors];
    for (int n = 0; n < kVectors; ++n) r[n] = p[n] = _mm512_setzero_ps();
    for (int64_t i = 0; i < h.dk; ++i) {
      const float* s = h.state + i * h.dv + j0;
      const __m512 ki = _mm512_set1_ps(k[i]);
      const __m512 qi = _mm512_set1_ps(q[i]);
      for (int n = 0; n < kVectors; ++n) {
        const __m512 x = _mm512_loadu_ps(s + 16 * n);
        r[n] = _mm512_fmadd_ps(ki, x, r[n]);
        p[n] = _mm512_fmadd_ps(qi, x, p[n]);
      }
    }
    const float* v = h.v + t * h.v_stride + j0;
    float* o = h.out + t * h.v_stride + j0;
    __m512 delta[kVectors];
    for (int n = 0; n < kVectors; ++n) {
      delta[n] = _mm512_mul_ps(beta, _mm512_fnmadd_ps(decay, r[n], _mm512_loadu_ps(v + 16 * n)));
      _mm512_storeu_ps(o + 16 * n, _mm512_fmadd_ps(decay, p[n], _mm512_mul_ps(kq, delta[n])));
    }
    for (int64_t i = 0; i < h.dk; ++i) {
      float* s = h.state + i * h.dv + j0;
      const __m512 ki = _mm512_set1_ps(k[i]);
      for (int n = 0; n < kVectors; ++n) {
        const __m512 x = _mm512_loadu_ps(s + 16 * n);
        _mm512_storeu_ps(s + 16 * n, _mm512_fmadd_ps(ki, delta[n], _mm512_mul_ps(decay, x)));
      }
    }
  }
}

// A narrower last slab goes to the AVX2 kernel in its own blocks.
void recurrent_columns_avx512(const GdnHead& h, int64_t j0, int64_t j1) {
  if (j1 - j0 == kSlabColumns) {
    recurrent_slab(h, j0);
    return;
  }
  const GdnKernels& avx2 = gdn_kernels_avx2();
  for (int64_t j = j0; j < j1; j += avx2.column_block)
    avx2.recurrent_columns(h, j, std::min(j1, j + avx2.column_block));
}

}  // namespace

const GdnKernels& gdn_kernels_avx512() {
  static constexpr GdnKernels kKernels{"avx512", kSlabColumns, recurrent_columns_avx512};
  return kKernels;
}

}  // namespace tern::kernels::cpu
