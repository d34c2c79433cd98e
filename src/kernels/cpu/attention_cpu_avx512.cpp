// AVX-512 block policy for the online-softmax attention (attention_head.h): sixteen lanes of fp32 per
// step, fp16 widened by vcvtph2ps, q8 codes sign-extended, converted and multiplied by their group's scale
// once per loaded vector, a head_dim that is not a multiple of sixteen finished by masked loads. Keys are
// scored four at a time against every query head of the group (4 × 6 accumulators in registers, each
// loaded query vector used for four keys), and the sixteen keys' partial sums of one head are folded into
// one vector of sixteen scores by a shuffle tree instead of one horizontal sum per (key, head). Values are
// added two vectors of the row at a time over the whole key block, each head's accumulator slice held in
// registers for the block. Rows are read a 64-byte line at a time, each line's copy one key block later
// requested into L2 as the line is read.
#include <immintrin.h>

#include "kernels/cpu/attention_cpu.h"
#include "kernels/cpu/attention_head.h"
#include "kernels/cpu/vector_exp_avx512.h"

namespace tern::kernels::cpu {

namespace {

using ref::KvPrecision;

// The lanes of the sixteen elements from d on that lie inside a row of hd.
__mmask16 lanes(int64_t hd, int64_t d) {
  return hd - d >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (hd - d)) - 1u);
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

  // The lanes `mask` (not empty) of the sixteen values from element d on (d a multiple of 16, so they
  // share one q8 group), as fp32; other lanes 0. kFull: all sixteen lie in the row, the mask is ignored.
  template <bool kFull>
  __m512 load16(int64_t d, __mmask16 mask) const {
    if constexpr (P == KvPrecision::kF16) {
      const uint16_t* p = static_cast<const uint16_t*>(data) + d;
      return _mm512_cvtph_ps(kFull ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
                                   : _mm256_maskz_loadu_epi16(mask, p));
    } else if constexpr (P == KvPrecision::kF32) {
      const float* p = static_cast<const float*>(data) + d;
      return kFull ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask, p);
    } else {
      const int8_t* p = static_cast<const int8_t*>(data) + d;
      const __m128i bytes =
          kFull ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_maskz_loadu_epi8(mask, p);
      const __m512 codes = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
      return _mm512_mul_ps(codes, _mm512_set1_ps(scales[d / ref::kQ8Group]));
    }
  }
};

// Four keys' partial-sum vectors a, b, c, d → in each 128-bit lane L: [Σ_L a, Σ_L b, Σ_L c, Σ_L d].
__m512 fold_four(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
  const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
  return _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                       _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
}

// Two fold_four results (keys k..k+3 and k+4..k+7) → lanes [k..k+3 (L0+L1), (L2+L3), k+4..k+7 (L0+L1),
// (L2+L3)]; applied again to two of those, the sixteen keys' totals in order.
__m512 fold_lanes(__m512 x, __m512 y) {
  return _mm512_add_ps(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 1, 3, 1)));
}

// Elements of a row in one 64-byte line: the loops step through rows a line at a time, so that each
// line is requested once, one key block ahead, with no address arithmetic beyond one add.
template <KvPrecision P>
constexpr int64_t kLineElements = 64 / ref::kv_element_bytes(P);

// Sixteen floats from p (kFull), or the lanes `mask` of them.
template <bool kFull>
__m512 load_floats(const float* p, __mmask16 mask) {
  return kFull ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask, p);
}

// sum[k][j] += q_j · key_k over the sixteen elements from d on.
template <KvPrecision P, int N, bool kFull>
void score_step(const float* q, int64_t hd, const Row<P> (&keys)[4], int64_t d, __mmask16 mask,
                __m512 (&sum)[4][N]) {
  __m512 key[4];
  for (int k = 0; k < 4; ++k) key[k] = keys[k].template load16<kFull>(d, mask);
  for (int j = 0; j < N; ++j) {
    const __m512 query = load_floats<kFull>(q + j * hd + d, mask);
    for (int k = 0; k < 4; ++k) sum[k][j] = _mm512_fmadd_ps(query, key[k], sum[k][j]);
  }
}

template <KvPrecision P, int N>
void scores_n(const float* q, const KvHeadRows& rows, int64_t t0, int64_t count, AttentionBlock& out) {
  const ref::KvView& kv = rows.kv;
  const int64_t hd = kv.head_dim;
  constexpr int64_t kLine = kLineElements<P>;
  __m512 quads[N][4];
  for (int64_t quad = 0; quad < 4; ++quad) {
    const int64_t first = 4 * quad;
    if (first >= count) {
      for (int j = 0; j < N; ++j) quads[j][quad] = _mm512_setzero_ps();
      continue;
    }
    // A quad past the block's last key repeats that key; its scores are never used.
    Row<P> keys[4];
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t i = first + k < count ? first + k : count - 1;
      keys[k] = Row<P>(kv.k, kv.k_scales, hd, rows.row(t0 + i));
    }
    __m512 sum[4][N];
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < N; ++j) sum[k][j] = _mm512_setzero_ps();
    int64_t d = 0;
    for (; d + 16 <= hd; d += 16) {
      if (d % kLine == 0)
        for (int k = 0; k < 4; ++k) rows.prefetch_line(keys[k].data, d);
      score_step<P, N, true>(q, hd, keys, d, 0xffff, sum);
    }
    if (d < hd) {
      if (d % kLine == 0)
        for (int k = 0; k < 4; ++k) rows.prefetch_line(keys[k].data, d);
      score_step<P, N, false>(q, hd, keys, d, lanes(hd, d), sum);
    }
    for (int j = 0; j < N; ++j) quads[j][quad] = fold_four(sum[0][j], sum[1][j], sum[2][j], sum[3][j]);
  }
  for (int j = 0; j < N; ++j) {
    _mm512_store_ps(out[j],
                    fold_lanes(fold_lanes(quads[j][0], quads[j][1]), fold_lanes(quads[j][2], quads[j][3])));
  }
}

// acc_j[d0 .. d0 + 16·W) += Σ_i w[j][i] · value_i[...] over the block, the slices held in registers.
// kFull: the slice lies inside the row.
template <KvPrecision P, int N, int W, bool kFull>
void add_slice(float* acc, const AttentionBlock& w, const KvHeadRows& rows, const Row<P>* values,
               int64_t count, int64_t hd, int64_t d0) {
  __mmask16 mask[W];
  bool starts_line[W];
  __m512 a[W][N];
  for (int c = 0; c < W; ++c) {
    mask[c] = lanes(hd, d0 + 16 * c);
    starts_line[c] = (d0 + 16 * c) % kLineElements<P> == 0;
    for (int j = 0; j < N; ++j) a[c][j] = load_floats<kFull>(acc + j * hd + d0 + 16 * c, mask[c]);
  }
  for (int64_t i = 0; i < count; ++i) {
    for (int c = 0; c < W; ++c)
      if (starts_line[c]) rows.prefetch_line(values[i].data, d0 + 16 * c);
    __m512 v[W];
    for (int c = 0; c < W; ++c) v[c] = values[i].template load16<kFull>(d0 + 16 * c, mask[c]);
    for (int j = 0; j < N; ++j) {
      const __m512 weight = _mm512_set1_ps(w[j][i]);
      for (int c = 0; c < W; ++c) a[c][j] = _mm512_fmadd_ps(weight, v[c], a[c][j]);
    }
  }
  for (int c = 0; c < W; ++c) {
    for (int j = 0; j < N; ++j) {
      float* slice = acc + j * hd + d0 + 16 * c;
      if constexpr (kFull) {
        _mm512_storeu_ps(slice, a[c][j]);
      } else {
        _mm512_mask_storeu_ps(slice, mask[c], a[c][j]);
      }
    }
  }
}

// Widest slices first: each pass walks the block's value rows and broadcasts its weights again, so four
// slices a pass (4·N accumulators and 4 values in the 32 registers) pay that once per 64 elements.
template <KvPrecision P, int N>
void add_n(float* acc, const AttentionBlock& w, const KvHeadRows& rows, int64_t t0, int64_t count) {
  const ref::KvView& kv = rows.kv;
  const int64_t hd = kv.head_dim;
  Row<P> values[kAttentionKeyBlock];
  for (int64_t i = 0; i < count; ++i) values[i] = Row<P>(kv.v, kv.v_scales, hd, rows.row(t0 + i));
  int64_t d = 0;
  for (; d + 64 <= hd; d += 64) add_slice<P, N, 4, true>(acc, w, rows, values, count, hd, d);
  for (; d + 32 <= hd; d += 32) add_slice<P, N, 2, true>(acc, w, rows, values, count, hd, d);
  for (; d < hd; d += 16) add_slice<P, N, 1, false>(acc, w, rows, values, count, hd, d);
}

template <KvPrecision P>
struct Avx512Block {
  static void scores(const float* q, int64_t n, const KvHeadRows& rows, int64_t t0, int64_t count,
                     AttentionBlock& out) {
    with_group_size(n, [&](auto group) { scores_n<P, group.value>(q, rows, t0, count, out); });
  }

  static float scaled_max(float* x, int64_t count, float scale) {
    const __mmask16 live = lanes(count, 0);
    const __m512 scaled = _mm512_mul_ps(_mm512_load_ps(x), _mm512_set1_ps(scale));
    _mm512_store_ps(x, scaled);
    return _mm512_mask_reduce_max_ps(live, scaled);
  }

  static float exp_sum(float* x, int64_t count, float max) {
    const __m512 weights =
        _mm512_maskz_mov_ps(lanes(count, 0), exp16(_mm512_sub_ps(_mm512_load_ps(x), _mm512_set1_ps(max))));
    _mm512_store_ps(x, weights);
    return _mm512_reduce_add_ps(weights);
  }

  static void add(float* acc, const AttentionBlock& w, int64_t n, const KvHeadRows& rows, int64_t t0,
                  int64_t count) {
    with_group_size(n, [&](auto group) { add_n<P, group.value>(acc, w, rows, t0, count); });
  }

  static void scale(float* acc, float factor, int64_t hd) {
    const __m512 f = _mm512_set1_ps(factor);
    for (int64_t d = 0; d < hd; d += 16) {
      const __mmask16 mask = lanes(hd, d);
      _mm512_mask_storeu_ps(acc + d, mask, _mm512_mul_ps(f, _mm512_maskz_loadu_ps(mask, acc + d)));
    }
  }
};

}  // namespace

void attention_head_avx512(const AttentionSpan& span, const AttentionPartial& out) {
  switch (span.kv->precision) {
    case KvPrecision::kF16:
      return online_attention_span<Avx512Block<KvPrecision::kF16>>(span, out);
    case KvPrecision::kF32:
      return online_attention_span<Avx512Block<KvPrecision::kF32>>(span, out);
    case KvPrecision::kQ8:
      return online_attention_span<Avx512Block<KvPrecision::kQ8>>(span, out);
  }
}

}  // namespace tern::kernels::cpu
