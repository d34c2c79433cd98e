// AVX2 PQ2_0 x int8 kernel. Per 128-weight block and row: one 32-byte load of qs, four (qs >> 2s) & 3
// code vectors (3 shifts, 4 ands), four maddubs (u8 code x s8 activation) summed in int16 (max
// 4·2·3·127 = 3048, no saturation), minus the block's activation lane sums (the "−Σ q" term, exact),
// one madd to int32, one convert, and one multiply + FMA with d_w times the eight lane scales of the
// per-32 activation groups. A tile of R rows x T tokens unpacks each
// weight block once and reuses it for T tokens, and loads each activation vector once for R rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

namespace {

// Activations of this many bytes stay in L2 while a token chunk sweeps the thread's rows.
constexpr int64_t kActChunkBytes = 192 * 1024;

float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The block's fp16 scale in all eight lanes: one broadcast load and one conversion.
__m256 broadcast_fp16(const uint8_t* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(bits)));
}

template <int R, int T>
void tile(float* y, int64_t y_stride, const Pq2Matrix& w, const QuantizedActs& a, int64_t row,
          int64_t token) {
  const int64_t blocks = a.blocks();
  const __m256i low2 = _mm256_set1_epi8(3);
  const __m256i ones = _mm256_set1_epi16(1);
  const uint8_t* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = w.data + static_cast<size_t>(row + r) * w.row_bytes;
  const int8_t* q[T];
  const float* scales[T];
  const int16_t* sums[T];
  for (int t = 0; t < T; ++t) {
    q[t] = a.token_q(token + t);
    scales[t] = a.token_lane_scales(token + t);
    sums[t] = a.token_lane_sums(token + t);
  }
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();

  // The R rows are one contiguous span; the next tile's span is fetched at the same pace, so the
  // short per-row streams of K = 5120 (40 blocks) do not wait for the hardware prefetcher to retrain.
  const uint8_t* next = rows[0] + R * static_cast<int64_t>(w.row_bytes);
  constexpr int64_t kSpanStep = R * static_cast<int64_t>(kPq2BlockBytes);
  for (int64_t b = 0; b < blocks; ++b) {
    if constexpr (T == 1) {
      for (int64_t line = 0; line < kSpanStep; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(next + b * kSpanStep + line), _MM_HINT_T0);
      }
    }
    for (int r = 0; r < R; ++r) {
      const uint8_t* block = rows[r] + b * static_cast<int64_t>(kPq2BlockBytes);
      const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
      const __m256i c0 = _mm256_and_si256(qs, low2);
      const __m256i c1 = _mm256_and_si256(_mm256_srli_epi16(qs, 2), low2);
      const __m256i c2 = _mm256_and_si256(_mm256_srli_epi16(qs, 4), low2);
      const __m256i c3 = _mm256_and_si256(_mm256_srli_epi16(qs, 6), low2);
      const __m256 d_w = broadcast_fp16(block);
      for (int t = 0; t < T; ++t) {
        const __m256i* x = reinterpret_cast<const __m256i*>(q[t] + b * kActBlock);
        const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(c0, _mm256_load_si256(x)),
                                             _mm256_maddubs_epi16(c1, _mm256_load_si256(x + 1)));
        const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(c2, _mm256_load_si256(x + 2)),
                                             _mm256_maddubs_epi16(c3, _mm256_load_si256(x + 3)));
        const __m256i lane_sums =
            _mm256_load_si256(reinterpret_cast<const __m256i*>(sums[t] + b * kLaneSums));
        const __m256i dot16 = _mm256_sub_epi16(_mm256_add_epi16(p01, p23), lane_sums);
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(dot16, ones));
        const __m256 scale = _mm256_mul_ps(d_w, _mm256_load_ps(scales[t] + b * kLaneScales));
        acc[r][t] = _mm256_fmadd_ps(dot, scale, acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[(token + t) * y_stride + row + r] = horizontal_sum(acc[r][t]);
}

// All rows [row_begin, row_end) for tokens [token_begin, token_end), R rows x T tokens per tile.
template <int R, int T>
void sweep(float* y, int64_t y_stride, const Pq2Matrix& w, const QuantizedActs& a, int64_t row_begin,
           int64_t row_end, int64_t token_begin, int64_t token_end) {
  int64_t r = row_begin;
  for (; r + R <= row_end; r += R) {
    int64_t t = token_begin;
    for (; t + T <= token_end; t += T) tile<R, T>(y, y_stride, w, a, r, t);
    for (; t < token_end; ++t) tile<R, 1>(y, y_stride, w, a, r, t);
  }
  for (; r < row_end; ++r) {
    int64_t t = token_begin;
    for (; t + T <= token_end; t += T) tile<1, T>(y, y_stride, w, a, r, t);
    for (; t < token_end; ++t) tile<1, 1>(y, y_stride, w, a, r, t);
  }
}

}  // namespace

void pq2_rows_avx2(float* y, int64_t y_stride, const Pq2Matrix& w, const QuantizedActs& a, int64_t row_begin,
                   int64_t row_end) {
  if (a.n_tokens == 1) {
    sweep<4, 1>(y, y_stride, w, a, row_begin, row_end, 0, 1);
    return;
  }
  const int64_t chunk = std::max<int64_t>(4, kActChunkBytes / a.k / 4 * 4);
  for (int64_t t = 0; t < a.n_tokens; t += chunk) {
    sweep<2, 4>(y, y_stride, w, a, row_begin, row_end, t, std::min(a.n_tokens, t + chunk));
  }
}

}  // namespace tern::kernels::cpu
