#include "kernels/ref/attention.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/half.h"

namespace tern::kernels::ref {

namespace {

float load(const void* base, bool fp16, int64_t index) {
  if (fp16) return fp16_to_fp32(static_cast<const uint16_t*>(base)[index]);
  return static_cast<const float*>(base)[index];
}

}  // namespace

void attention(float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head, float scale) {
  const int64_t group = n_head / kv.n_kv;
  const int64_t hd = kv.head_dim;
  std::array<double, kMaxHeadDim> acc;
  for (int64_t h = 0; h < n_head; ++h) {
    const float* qh = q + h * hd;
    const int64_t j = h / group;
    auto score = [&](int64_t t) {
      const int64_t base = (t * kv.n_kv + j) * hd;
      double dot = 0.0;
      for (int64_t d = 0; d < hd; ++d) dot += static_cast<double>(qh[d]) * load(kv.k, kv.fp16, base + d);
      return dot * static_cast<double>(scale);
    };
    double max_score = -std::numeric_limits<double>::infinity();
    for (int64_t t = 0; t < n_keys; ++t) max_score = std::max(max_score, score(t));
    std::fill_n(acc.begin(), hd, 0.0);
    double denom = 0.0;
    for (int64_t t = 0; t < n_keys; ++t) {
      const double w = std::exp(score(t) - max_score);
      denom += w;
      const int64_t base = (t * kv.n_kv + j) * hd;
      for (int64_t d = 0; d < hd; ++d) acc[d] += w * load(kv.v, kv.fp16, base + d);
    }
    float* oh = out + h * hd;
    for (int64_t d = 0; d < hd; ++d) oh[d] = static_cast<float>(acc[d] / denom);
  }
}

}  // namespace tern::kernels::ref
