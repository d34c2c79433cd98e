#include "kernels/cpu/site_transform.h"

#include <cmath>

#include "core/cpu_features.h"
#include "kernels/ref/site_transform.h"

namespace tern::kernels::cpu {

namespace {

// Shapes the oracle would refuse go to it, so the refusal is the same.
bool fast_path(int64_t width, std::span<const float> signs, int64_t block) {
  const bool shape_ok = block >= 8 && (block & (block - 1)) == 0 && width % block == 0 &&
                        (signs.empty() || static_cast<int64_t>(signs.size()) == width);
  return shape_ok && cpu_features().has_avx2_fma();
}

// x[i] ← x[i] · s[i] · scale, rounded as the oracle's two separate multiplies (a ±1 sign is exact).
void signs_and_scale(float* x, int64_t width, std::span<const float> signs, float scale) {
  if (signs.empty()) {
    for (int64_t i = 0; i < width; ++i) x[i] *= scale;
  } else {
    for (int64_t i = 0; i < width; ++i) x[i] = x[i] * signs[static_cast<size_t>(i)] * scale;
  }
}

float block_scale(int64_t block) {
  return 1.0f / std::sqrt(static_cast<float>(block));
}

}  // namespace

void site_forward(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block) {
  if (!fast_path(width, signs, block)) {
    ref::site_forward(x, n_tokens, width, signs, block);
    return;
  }
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* row = x + t * width;
    signs_and_scale(row, width, signs, block_scale(block));
    for (int64_t b = 0; b < width; b += block) fwht_avx2(row + b, block);
  }
}

void site_inverse(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block) {
  if (!fast_path(width, signs, block)) {
    ref::site_inverse(x, n_tokens, width, signs, block);
    return;
  }
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* row = x + t * width;
    signs_and_scale(row, width, {}, block_scale(block));
    for (int64_t b = 0; b < width; b += block) fwht_avx2(row + b, block);
    if (!signs.empty()) {
      for (int64_t i = 0; i < width; ++i) row[i] *= signs[static_cast<size_t>(i)];
    }
  }
}

}  // namespace tern::kernels::cpu
