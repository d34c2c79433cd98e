// AVX2 + FMA + F16C block policy for the online-softmax attention (attention_head.h): eight lanes of
// fp32 per step, fp16 keys and values widened by vcvtph2ps, q8 codes sign-extended, converted and
// multiplied by their group's scale once per loaded vector, each loaded key or value vector used for every
// query head of the group. Keys are scored two at a time, so each loaded query vector serves both and the
// 2 × 6 accumulator chains hide the FMA latency (one key's six chains left it exposed: ≈ 1.2× in L2,
// docs/performance.md). Values are added two vectors of the row at a time over the whole key block,
// so each head's accumulator slice stays in registers for the block. A head_dim that is not a multiple of
// eight finishes lane by lane.
#include <immintrin.h>

#include <cstring>
#include <limits>

#include "kernels/cpu/attention_cpu.h"
#include "kernels/cpu/attention_head.h"
#include "kernels/cpu/lane_sum_x86.h"
#include "kernels/cpu/vector_exp_avx2.h"

namespace tern::kernels::cpu {

namespace {

using ref::KvPrecision;

float horizontal_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// All-ones in the lanes base + 0 .. 7 that are below count.
__m256 live_lanes(int64_t count, int64_t base) {
  const __m256i index =
      _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(base)));
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), index));
}

// One KV row of one head: its elements and, for q8, its group scales.
template <KvPrecision P>
struct Row {
  const void* data = nullptr;
  const float* scales = nullptr;

  Row() = default;
  Row(const void* base, const float* base_scales, int64_t hd, int64_t row) {
    if constexpr (P == KvPrecision::kF16) {
      data = static_cast<const uint16_t*>(base) + row * hd;
    } else if constexpr (P == KvPrecision::kF32) {
      data = static_cast<const float*>(base) + row * hd;
    } else {
      data = static_cast<const int8_t*>(base) + row * hd;
    }
    scales = P == KvPrecision::kQ8 ? base_scales + row * ref::q8_groups(hd) : nullptr;
  }

  // Eight values from element d on (d a multiple of 8, so they share one q8 group), as fp32.
  __m256 load8(int64_t d) const {
    if constexpr (P == KvPrecision::kF16) {
      return _mm256_cvtph_ps(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(data) + d)));
    } else if constexpr (P == KvPrecision::kF32) {
      return _mm256_loadu_ps(static_cast<const float*>(data) + d);
    } else {
      int64_t bytes;
      std::memcpy(&bytes, static_cast<const int8_t*>(data) + d, sizeof bytes);
      const __m256 codes = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes)));
      return _mm256_mul_ps(codes, _mm256_set1_ps(scales[d / ref::kQ8Group]));
    }
  }

  float load1(int64_t d) const {
    if constexpr (P == KvPrecision::kF16) {
      return _cvtsh_ss(static_cast<const uint16_t*>(data)[d]);
    } else if constexpr (P == KvPrecision::kF32) {
      return static_cast<const float*>(data)[d];
    } else {
      return static_cast<float>(static_cast<const int8_t*>(data)[d]) * scales[d / ref::kQ8Group];
    }
  }
};

// out[j][i + k] = q_j · key(t0 + i + k) for K keys from i on, over the whole row: each query vector is
// loaded once for the K keys, and K·N independent chains hide the FMA latency that one key's N chains
// leave exposed.
template <KvPrecision P, int N, int K>
void score_keys(const float* q, const KvHeadRows& rows, int64_t t0, int64_t i, AttentionBlock& out) {
  const ref::KvView& kv = rows.kv;
  const int64_t hd = kv.head_dim;
  Row<P> keys[K];
  for (int k = 0; k < K; ++k) keys[k] = Row<P>(kv.k, kv.k_scales, hd, rows.row(t0 + i + k));
  __m256 sum[K][N];
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) sum[k][j] = _mm256_setzero_ps();
  int64_t d = 0;
  for (; d + 8 <= hd; d += 8) {
    __m256 key[K];
    for (int k = 0; k < K; ++k) key[k] = keys[k].load8(d);
    for (int j = 0; j < N; ++j) {
      __m256 query = _mm256_loadu_ps(q + j * hd + d);
      // In a register: GCC would otherwise fold the load into each key's FMA and load it K times.
      if constexpr (K > 1) __asm__("" : "+x"(query));
      for (int k = 0; k < K; ++k) sum[k][j] = _mm256_fmadd_ps(query, key[k], sum[k][j]);
    }
  }
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) out[j][i + k] = sum_of_lanes(sum[k][j]);
  for (; d < hd; ++d) {
    for (int k = 0; k < K; ++k) {
      const float key = keys[k].load1(d);
      for (int j = 0; j < N; ++j) out[j][i + k] += q[j * hd + d] * key;
    }
  }
  for (int k = 0; k < K; ++k) rows.prefetch_next(keys[k].data, 0, hd);
}

template <KvPrecision P, int N>
void scores_n(const float* q, const KvHeadRows& rows, int64_t t0, int64_t count, AttentionBlock& out) {
  int64_t i = 0;
  for (; i + 2 <= count; i += 2) score_keys<P, N, 2>(q, rows, t0, i, out);
  if (i < count) score_keys<P, N, 1>(q, rows, t0, i, out);
}

// acc_j[d0 .. d0 + 8·W) += Σ_i w[j][i] · value_i[...], the slices held in registers over the block.
template <KvPrecision P, int N, int W>
void add_slice(float* acc, const AttentionBlock& w, const KvHeadRows& rows, const Row<P>* values,
               int64_t count, int64_t hd, int64_t d0) {
  __m256 a[W][N];
  for (int c = 0; c < W; ++c)
    for (int j = 0; j < N; ++j) a[c][j] = _mm256_loadu_ps(acc + j * hd + d0 + 8 * c);
  for (int64_t i = 0; i < count; ++i) {
    rows.prefetch_next(values[i].data, d0, 8 * W);
    __m256 v[W];
    for (int c = 0; c < W; ++c) v[c] = values[i].load8(d0 + 8 * c);
    for (int j = 0; j < N; ++j) {
      const __m256 weight = _mm256_set1_ps(w[j][i]);
      for (int c = 0; c < W; ++c) a[c][j] = _mm256_fmadd_ps(weight, v[c], a[c][j]);
    }
  }
  for (int c = 0; c < W; ++c)
    for (int j = 0; j < N; ++j) _mm256_storeu_ps(acc + j * hd + d0 + 8 * c, a[c][j]);
}

template <KvPrecision P, int N>
void add_n(float* acc, const AttentionBlock& w, const KvHeadRows& rows, int64_t t0, int64_t count) {
  const ref::KvView& kv = rows.kv;
  const int64_t hd = kv.head_dim;
  Row<P> values[kAttentionKeyBlock] = {};
  for (int64_t i = 0; i < count; ++i) values[i] = Row<P>(kv.v, kv.v_scales, hd, rows.row(t0 + i));
  int64_t d = 0;
  for (; d + 16 <= hd; d += 16) add_slice<P, N, 2>(acc, w, rows, values, count, hd, d);
  for (; d + 8 <= hd; d += 8) add_slice<P, N, 1>(acc, w, rows, values, count, hd, d);
  for (; d < hd; ++d) {
    for (int64_t i = 0; i < count; ++i) {
      const float value = values[i].load1(d);
      for (int j = 0; j < N; ++j) acc[j * hd + d] += w[j][i] * value;
    }
  }
}

template <KvPrecision P>
struct Avx2Block {
  static void scores(const float* q, int64_t n, const KvHeadRows& rows, int64_t t0, int64_t count,
                     AttentionBlock& out) {
    with_group_size(n, [&](auto group) { scores_n<P, group.value>(q, rows, t0, count, out); });
  }

  static float scaled_max(float* x, int64_t count, float scale) {
    __m256 max = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i < kAttentionKeyBlock; i += 8) {
      const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(scale));
      _mm256_storeu_ps(x + i, scaled);
      max = _mm256_max_ps(max, _mm256_blendv_ps(max, scaled, live_lanes(count, i)));
    }
    return horizontal_max(max);
  }

  static float exp_sum(float* x, int64_t count, float max) {
    __m256 sum = _mm256_setzero_ps();
    for (int64_t i = 0; i < kAttentionKeyBlock; i += 8) {
      const __m256 shifted = _mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(max));
      const __m256 weights = _mm256_and_ps(live_lanes(count, i), exp8(shifted));
      _mm256_storeu_ps(x + i, weights);
      sum = _mm256_add_ps(sum, weights);
    }
    return sum_of_lanes(sum);
  }

  static void add(float* acc, const AttentionBlock& w, int64_t n, const KvHeadRows& rows, int64_t t0,
                  int64_t count) {
    with_group_size(n, [&](auto group) { add_n<P, group.value>(acc, w, rows, t0, count); });
  }

  static void scale(float* acc, float factor, int64_t hd) {
    const __m256 f = _mm256_set1_ps(factor);
    int64_t d = 0;
    for (; d + 8 <= hd; d += 8) _mm256_storeu_ps(acc + d, _mm256_mul_ps(f, _mm256_loadu_ps(acc + d)));
    for (; d < hd; ++d) acc[d] *= factor;
  }
};

}  // namespace

void attention_head_avx2(const AttentionSpan& span, const AttentionPartial& out) {
  switch (span.kv->precision) {
    case KvPrecision::kF16:
      return online_attention_span<Avx2Block<KvPrecision::kF16>>(span, out);
    case KvPrecision::kF32:
      return online_attention_span<Avx2Block<KvPrecision::kF32>>(span, out);
    case KvPrecision::kQ8:
      return online_attention_span<Avx2Block<KvPrecision::kQ8>>(span, out);
  }
}

}  // namespace tern::kernels::cpu
