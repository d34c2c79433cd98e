#include "kernels/ref/attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/half.h"

namespace tern::kernels::ref {

namespace {

// Element `index` of a cache array laid out [row][head_dim] (row = kv_row(position, head, n_kv)), as double.
double load(const void* base, const float* scales, const KvView& kv, int64_t index) {
  switch (kv.precision) {
    case KvPrecision::kF16:
      return fp16_to_fp32(static_cast<const uint16_t*>(base)[index]);
    case KvPrecision::kF32:
      return static_cast<const float*>(base)[index];
    case KvPrecision::kQ8: {
      const int64_t row = index / kv.head_dim;
      const int64_t group = (index % kv.head_dim) / kQ8Group;
      return static_cast<double>(static_cast<const int8_t*>(base)[index]) *
             static_cast<double>(scales[row * q8_groups(kv.head_dim) + group]);
    }
  }
  return 0.0;
}

}  // namespace

void quantize_q8_head(const float* x, int64_t n, int8_t* codes, float* scales) {
  for (int64_t g = 0; g * kQ8Group < n; ++g) {
    const int64_t begin = g * kQ8Group;
    const int64_t end = std::min(n, begin + kQ8Group);
    float max_abs = 0.0f;
    for (int64_t i = begin; i < end; ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
    const float scale = max_abs / 127.0f;
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
    for (int64_t i = begin; i < end; ++i) {
      // fmax/fmin also map a NaN (from a non-finite input) into range before the conversion.
      const float code = std::fmin(127.0f, std::fmax(-127.0f, std::round(x[i] * inverse)));
      codes[i] = static_cast<int8_t>(code);
    }
    scales[g] = scale;
  }
}

void attention(float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head, float scale) {
  const int64_t group = n_head / kv.n_kv;
  const int64_t hd = kv.head_dim;
  std::array<double, kMaxHeadDim> acc;
  for (int64_t h = 0; h < n_head; ++h) {
    const float* qh = q + h * hd;
    const int64_t j = h / group;
    auto score = [&](int64_t t) {
      const int64_t base = kv_row(t, j, kv.n_kv) * hd;
      double dot = 0.0;
      for (int64_t d = 0; d < hd; ++d)
        dot += static_cast<double>(qh[d]) * load(kv.k, kv.k_scales, kv, base + d);
      return dot * static_cast<double>(scale);
    };
    double max_score = -std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < n_keys; ++t) max_score = std::max(max_score, score(t));
    std::fill_n(acc.begin(), hd, 0.0);
    double denom = 0.0;
    for (int64_t t = 0; t < n_keys; ++t) {
      const double w = std::exp(score(t) - max_score);
      denom += w;
      const int64_t base = kv_row(t, j, kv.n_kv) * hd;
      for (int64_t d = 0; d < hd; ++d) acc[d] += w * load(kv.v, kv.v_scales, kv, base + d);
    }
    float* oh = out + h * hd;
    for (int64_t d = 0; d < hd; ++d) oh[d] = static_cast<float>(acc[d] / denom);
  }
}

}  // namespace tern::kernels::ref
