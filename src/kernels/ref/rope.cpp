#include "kernels/ref/rope.h"

#include <cmath>

namespace tern::kernels::ref {

void rope_angles(double* cos_sin, int64_t rope_dim, int64_t pos, double theta) {
  const int64_t half = rope_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double inv_freq = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim));
    const double angle = static_cast<double>(pos) * inv_freq;
    cos_sin[i] = std::cos(angle);
    cos_sin[half + i] = std::sin(angle);
  }
}

void rope_rotate(float* x, int64_t rope_dim, const double* cos_sin) {
  const int64_t half = rope_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double c = cos_sin[i];
    const double s = cos_sin[half + i];
    const double a = x[i];
    const double b = x[i + half];
    x[i] = static_cast<float>(a * c - b * s);
    x[i + half] = static_cast<float>(b * c + a * s);
  }
}

}  // namespace tern::kernels::ref
