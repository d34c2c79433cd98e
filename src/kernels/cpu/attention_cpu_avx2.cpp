// AVX2 + FMA + F16C row policies for the online-softmax attention (attention_head.h): eight lanes of
// fp32 per step, each widened key or value vector used for every query head of the group, fp16 keys and
// values widened by vcvtph2ps, q8 codes sign-extended and converted, and each q8 group's partial dot product
// multiplied by its scale once. A head_dim (or q8 group) that is not a multiple of eight finishes lane by
// lane.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/attention_cpu.h"
#include "kernels/cpu/attention_head.h"

namespace tern::kernels::cpu {

namespace {

using ref::KvPrecision;

float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Eight values of a row from element `d` on, as fp32 (q8: codes only, unscaled).
template <KvPrecision P>
__m256 load8(const void* row, int64_t d) {
  if constexpr (P == KvPrecision::kF16) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + d)));
  } else if constexpr (P == KvPrecision::kF32) {
    return _mm256_loadu_ps(static_cast<const float*>(row) + d);
  } else {
    int64_t bytes;
    std::memcpy(&bytes, static_cast<const int8_t*>(row) + d, sizeof bytes);
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(bytes)));
  }
}

template <KvPrecision P>
float load1(const void* row, int64_t d) {
  if constexpr (P == KvPrecision::kF16) {
    return _cvtsh_ss(static_cast<const uint16_t*>(row)[d]);
  } else if constexpr (P == KvPrecision::kF32) {
    return static_cast<const float*>(row)[d];
  } else {
    return static_cast<float>(static_cast<const int8_t*>(row)[d]);
  }
}

template <KvPrecision P>
const void* row_at(const void* data, int64_t hd, int64_t row) {
  if constexpr (P == KvPrecision::kF16) {
    return static_cast<const uint16_t*>(data) + row * hd;
  } else if constexpr (P == KvPrecision::kF32) {
    return static_cast<const float*>(data) + row * hd;
  } else {
    return static_cast<const int8_t*>(data) + row * hd;
  }
}

// The ranges a row is processed in: the q8 groups, or the whole row as one range with unit scale.
template <KvPrecision P>
int64_t range_length(int64_t hd) {
  return P == KvPrecision::kQ8 ? ref::kQ8Group : hd;
}

template <KvPrecision P>
struct Avx2Row {
  // Each loaded (and widened) key vector is multiplied into all n queries; per range (a q8 group, or
  // the whole row) the partial sums are scaled once.
  static void dot(const float* q, int64_t n, const void* data, const float* scales, int64_t hd, int64_t row,
                  float* out) {
    const void* r = row_at<P>(data, hd, row);
    const float* row_scales = P == KvPrecision::kQ8 ? scales + row * ref::q8_groups(hd) : nullptr;
    const int64_t length = range_length<P>(hd);
    __m256 total[kAttentionMaxGroup];
    float tail[kAttentionMaxGroup];
    for (int64_t j = 0; j < n; ++j) total[j] = _mm256_setzero_ps(), tail[j] = 0.0f;
    for (int64_t begin = 0, g = 0; begin < hd; begin += length, ++g) {
      const int64_t end = begin + length < hd ? begin + length : hd;
      __m256 part[kAttentionMaxGroup];
      float part_tail[kAttentionMaxGroup];
      for (int64_t j = 0; j < n; ++j) part[j] = _mm256_setzero_ps(), part_tail[j] = 0.0f;
      int64_t d = begin;
      for (; d + 8 <= end; d += 8) {
        const __m256 key = load8<P>(r, d);
        for (int64_t j = 0; j < n; ++j)
          part[j] = _mm256_fmadd_ps(_mm256_loadu_ps(q + j * hd + d), key, part[j]);
      }
      for (; d < end; ++d) {
        const float key = load1<P>(r, d);
        for (int64_t j = 0; j < n; ++j) part_tail[j] += q[j * hd + d] * key;
      }
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (P == KvPrecision::kQ8) {
          total[j] = _mm256_fmadd_ps(part[j], _mm256_set1_ps(row_scales[g]), total[j]);
          tail[j] += part_tail[j] * row_scales[g];
        } else {
          total[j] = _mm256_add_ps(total[j], part[j]);
          tail[j] += part_tail[j];
        }
      }
    }
    for (int64_t j = 0; j < n; ++j) out[j] = horizontal_sum(total[j]) + tail[j];
  }

  static void add(float* acc, const float* weights, int64_t n, const void* data, const float* scales,
                  int64_t hd, int64_t row) {
    const void* r = row_at<P>(data, hd, row);
    const float* row_scales = P == KvPrecision::kQ8 ? scales + row * ref::q8_groups(hd) : nullptr;
    const int64_t length = range_length<P>(hd);
    for (int64_t begin = 0, g = 0; begin < hd; begin += length, ++g) {
      const int64_t end = begin + length < hd ? begin + length : hd;
      __m256 w[kAttentionMaxGroup];
      float factor[kAttentionMaxGroup];
      for (int64_t j = 0; j < n; ++j) {
        factor[j] = P == KvPrecision::kQ8 ? weights[j] * row_scales[g] : weights[j];
        w[j] = _mm256_set1_ps(factor[j]);
      }
      int64_t d = begin;
      for (; d + 8 <= end; d += 8) {
        const __m256 value = load8<P>(r, d);
        for (int64_t j = 0; j < n; ++j) {
          float* a = acc + j * ref::kMaxHeadDim + d;
          _mm256_storeu_ps(a, _mm256_fmadd_ps(w[j], value, _mm256_loadu_ps(a)));
        }
      }
      for (; d < end; ++d) {
        const float value = load1<P>(r, d);
        for (int64_t j = 0; j < n; ++j) acc[j * ref::kMaxHeadDim + d] += factor[j] * value;
      }
    }
  }

  static void scale(float* acc, float factor, int64_t hd) {
    const __m256 f = _mm256_set1_ps(factor);
    int64_t d = 0;
    for (; d + 8 <= hd; d += 8) _mm256_storeu_ps(acc + d, _mm256_mul_ps(f, _mm256_loadu_ps(acc + d)));
    for (; d < hd; ++d) acc[d] *= factor;
  }
};

}  // namespace

void attention_head_avx2(float* out, const float* q, const ref::KvView& kv, int64_t kv_head, int64_t n,
                         int64_t n_keys, float scale) {
  switch (kv.precision) {
    case KvPrecision::kF16:
      return online_attention_group<Avx2Row<KvPrecision::kF16>>(out, q, kv, kv_head, n, n_keys, scale);
    case KvPrecision::kF32:
      return online_attention_group<Avx2Row<KvPrecision::kF32>>(out, q, kv, kv_head, n, n_keys, scale);
    case KvPrecision::kQ8:
      return online_attention_group<Avx2Row<KvPrecision::kQ8>>(out, q, kv, kv_head, n, n_keys, scale);
  }
}

}  // namespace tern::kernels::cpu
