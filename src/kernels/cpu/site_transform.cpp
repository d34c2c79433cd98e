#include "kernels/cpu/site_transform.h"

#include "core/cpu_features.h"
#include "hadamard/transform.h"
#include "kernels/cpu/silu.h"
#include "kernels/ref/site_transform.h"

namespace tern::kernels::cpu {

namespace {

using Fwht = void (*)(float* x, int64_t n);

// The vector butterflies this CPU runs; null where only the oracle's exist.
Fwht vector_fwht() {
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) return fwht_avx2;
#endif
  return nullptr;
}

// Shapes the oracle would refuse go to it, so the refusal is the same.
bool fast_path(int64_t width, std::span<const float> signs, int64_t block) {
  const bool shape_ok = block >= 8 && (block & (block - 1)) == 0 && width % block == 0 &&
                        (signs.empty() || static_cast<int64_t>(signs.size()) == width);
  return shape_ok && vector_fwht() != nullptr;
}

// Each row: multiply by `before` (may be empty) and the scale, butterflies per block, multiply by
// `after` (may be empty). Every product rounds as the oracle's separate multiplies (a ±1 sign is exact).
void transform_rows(float* x, int64_t n_tokens, int64_t width, std::span<const float> before,
                    std::span<const float> after, int64_t block) {
  const float scale = hadamard::block_scale(block);
  const Fwht fwht = vector_fwht();
  for (int64_t t = 0; t < n_tokens; ++t) {
    float* row = x + t * width;
    if (before.empty()) {
      for (int64_t i = 0; i < width; ++i) row[i] *= scale;
    } else {
      for (int64_t i = 0; i < width; ++i) row[i] = row[i] * before[static_cast<size_t>(i)] * scale;
    }
    for (int64_t b = 0; b < width; b += block) fwht(row + b, block);
    for (size_t i = 0; i < after.size(); ++i) row[i] *= after[i];
  }
}

}  // namespace

void site_forward(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block) {
  if (fast_path(width, signs, block)) {
    transform_rows(x, n_tokens, width, signs, {}, block);
  } else {
    ref::site_forward(x, n_tokens, width, signs, block);
  }
}

void site_inverse(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block) {
  if (fast_path(width, signs, block)) {
    transform_rows(x, n_tokens, width, {}, signs, block);
  } else {
    ref::site_inverse(x, n_tokens, width, signs, block);
  }
}

void swiglu_site(float* gate, const float* up, int64_t n_tokens, int64_t width, std::span<const float> signs,
                 int64_t block) {
  const SiluKernel silu = silu_kernel();
  const bool fast = block > 0 && fast_path(width, signs, block);
  for (int64_t t = 0; t < n_tokens; ++t) {
    silu(gate + t * width, gate + t * width, up + t * width, width);
    if (fast) transform_rows(gate + t * width, 1, width, signs, {}, block);
  }
  if (block > 0 && !fast) ref::site_forward(gate, n_tokens, width, signs, block);
}

}  // namespace tern::kernels::cpu
