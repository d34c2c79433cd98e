#include "kernels/ref/rms_norm.h"

#include <cmath>

#include "kernels/ref/activation.h"

namespace tern::kernels::ref {

namespace {

double inverse_rms(const float* x, int64_t n, float eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  return 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + static_cast<double>(eps));
}

}  // namespace

void rms_norm(float* out, const float* x, const float* gain, int64_t n, float eps) {
  const double scale = inverse_rms(x, n, eps);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(gain[i]) * (x[i] * scale));
}

void gated_rms_norm(float* out, const float* x, const float* gate, const float* gain, int64_t n, float eps) {
  const double scale = inverse_rms(x, n, eps);
  for (int64_t i = 0; i < n; ++i) {
    const float normed = static_cast<float>(static_cast<double>(gain[i]) * (x[i] * scale));
    out[i] = normed * silu(gate[i]);
  }
}

}  // namespace tern::kernels::ref
