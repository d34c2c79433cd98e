// AVX2 forms of norms_cpu.h: four doubles a vector. AVX2 files compile without contraction, so each
// element is the oracle's expression, rounded where the oracle rounds (the conv's one explicit fma is
// exact where it stands).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/cpu/norms_cpu.h"

namespace tern::kernels::cpu::avx2 {

namespace {

__m256d widen(const float* p) {
  return _mm256_cvtps_pd(_mm_loadu_ps(p));
}

double lane_sum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// Row w of the window [state rows | in rows].
const float* window_row(const float* in, const float* state, int64_t w, int64_t history, int64_t channels) {
  return w < history ? state + w * channels : in + (w - history) * channels;
}

// Channels c..c+3 of tap i, as doubles. The model's kernel of four taps takes one 4 × 4 transpose for
// all taps; other kernels load tap by tap.
struct TapWeights {
  __m128 taps[4];
  const float* group = nullptr;
  int64_t kernel = 0;

  TapWeights(const float* weight, int64_t c, int64_t kernel_size)
      : group(weight + c * kernel_size), kernel(kernel_size) {
    if (kernel != 4) return;
    for (int j = 0; j < 4; ++j) taps[j] = _mm_loadu_ps(group + 4 * j);
    _MM_TRANSPOSE4_PS(taps[0], taps[1], taps[2], taps[3]);
  }
  __m256d operator[](int64_t i) const {
    if (kernel == 4) return _mm256_cvtps_pd(taps[i]);
    return _mm256_cvtps_pd(
        _mm_setr_ps(group[i], group[kernel + i], group[2 * kernel + i], group[3 * kernel + i]));
  }
};

}  // namespace

double inverse_norm(const float* x, int64_t n, double divisor, float eps) {
  // Two chains of four lanes, so the adds do not wait on each other.
  __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d a = widen(x + i), b = widen(x + i + 4);
    acc0 = _mm256_add_pd(acc0, _mm256_mul_pd(a, a));
    acc1 = _mm256_add_pd(acc1, _mm256_mul_pd(b, b));
  }
  double sum_sq = lane_sum(_mm256_add_pd(acc0, acc1));
  for (; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  return 1.0 / std::sqrt(sum_sq / divisor + static_cast<double>(eps));
}

void scale_values(float* out, const float* x, const float* gain, double scale, int64_t n) {
  const __m256d s = _mm256_set1_pd(scale);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d v = _mm256_mul_pd(widen(x + i), s);
    if (gain != nullptr) v = _mm256_mul_pd(widen(gain + i), v);
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(v));
  }
  for (; i < n; ++i) {
    const double v = x[i] * scale;
    out[i] = static_cast<float>(gain == nullptr ? v : static_cast<double>(gain[i]) * v);
  }
}

void causal_conv(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                 int64_t channels, int64_t kernel) {
  const int64_t history = kernel - 1;
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* row_out = out + t * channels;
    int64_t c = 0;
    for (; c + 4 <= channels; c += 4) {
      const TapWeights w(weight, c, kernel);
      // A float product is exact in double, so the fused multiply-add rounds as the oracle's add does.
      __m256d acc = _mm256_setzero_pd();
      for (int64_t i = 0; i < kernel; ++i)
        acc = _mm256_fmadd_pd(w[i], widen(window_row(in, state, t + i, history, channels) + c), acc);
      _mm_storeu_ps(row_out + c, _mm256_cvtpd_ps(acc));
    }
    for (; c < channels; ++c) {
      double acc = 0.0;
      for (int64_t i = 0; i < kernel; ++i)
        acc +=
            static_cast<double>(weight[c * kernel + i]) * window_row(in, state, t + i, history, channels)[c];
      row_out[c] = static_cast<float>(acc);
    }
  }
  // New state = window rows [n_tokens, n_tokens + history), in ascending order: row i comes from row
  // n_tokens + i ≥ i, so no row is read after it was overwritten.
  for (int64_t i = 0; i < history; ++i) {
    const float* from = window_row(in, state, n_tokens + i, history, channels);
    if (from != state + i * channels)
      std::memmove(state + i * channels, from, static_cast<size_t>(channels) * sizeof(float));
  }
}

}  // namespace tern::kernels::cpu::avx2
