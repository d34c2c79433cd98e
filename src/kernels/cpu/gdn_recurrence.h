// The recurrence of gdn_cpu.h for one block of state columns, over a SIMD policy, shared by the AVX2 and
// AVX-512 kernels. Each kernel file instantiates it with a policy of its own unnamed namespace, so the
// code stays inside the file compiled for its ISA; the arithmetic per column is the same in every
// instantiation, so the kernels give the same bits. A policy supplies
//   V::Vec, V::kLanes, V::zero(), V::set1(float), V::load(const float*), V::store(float*, Vec),
//   V::fmadd(a, b, c) = a·b + c, V::fnmadd(a, b, c) = c − a·b, V::mul(a, b).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/lane_sum_x86.h"

namespace tern::kernels::cpu {

// k·q in one summation order for every instantiation. Static: each ISA file compiles its own copy (an
// inline function shared across such files could be linked as the AVX-512 copy and run on an AVX2
// machine).
static inline float gdn_dot(const float* x, const float* y, int64_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int a = 0; a < 4; ++a) {
      acc[a] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * a), _mm256_loadu_ps(y + i + 8 * a), acc[a]);
    }
  }
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc[0]);
  float total = sum_of_lanes(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) total = std::fma(x[i], y[i], total);
  return total;
}

// The recurrent form for the V::kLanes · kVectors state columns from j0, every token: r = Sᵀk and
// p = Sᵀq in one sweep, then δ and o, then S ← e^g S + k δᵀ in a second sweep.
template <class V, int kVectors>
void gdn_recurrent_block(const GdnHead& h, int64_t j0) {
  using Vec = typename V::Vec;
  for (int64_t t = 0; t < h.n_tokens; ++t) {
    const float* q = h.q + t * h.qk_stride;
    const float* k = h.k + t * h.qk_stride;
    const Vec decay = V::set1(std::exp(h.g[t * h.gate_stride]));
    const Vec beta = V::set1(h.beta[t * h.gate_stride]);
    const Vec kq = V::set1(gdn_dot(k, q, h.dk));
    Vec r[kVectors];
    Vec p[kVectors];
    for (int n = 0; n < kVectors; ++n) r[n] = p[n] = V::zero();
    for (int64_t i = 0; i < h.dk; ++i) {
      const float* s = h.state + i * h.dv + j0;
      const Vec ki = V::set1(k[i]);
      const Vec qi = V::set1(q[i]);
      for (int n = 0; n < kVectors; ++n) {
        const Vec x = V::load(s + V::kLanes * n);
        r[n] = V::fmadd(ki, x, r[n]);
        p[n] = V::fmadd(qi, x, p[n]);
      }
    }
    const float* v = h.v + t * h.v_stride + j0;
    float* o = h.out + t * h.v_stride + j0;
    Vec delta[kVectors];
    for (int n = 0; n < kVectors; ++n) {
      delta[n] = V::mul(beta, V::fnmadd(decay, r[n], V::load(v + V::kLanes * n)));
      V::store(o + V::kLanes * n, V::fmadd(decay, p[n], V::mul(kq, delta[n])));
    }
    for (int64_t i = 0; i < h.dk; ++i) {
      float* s = h.state + i * h.dv + j0;
      const Vec ki = V::set1(k[i]);
      for (int n = 0; n < kVectors; ++n) {
        const Vec x = V::load(s + V::kLanes * n);
        V::store(s + V::kLanes * n, V::fmadd(ki, delta[n], V::mul(decay, x)));
      }
    }
  }
}

}  // namespace tern::kernels::cpu
