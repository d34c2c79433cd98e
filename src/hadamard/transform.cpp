#include "hadamard/transform.h"

#include <cmath>
#include <cstddef>

#include "core/error.h"

namespace tern::hadamard {
namespace {

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

void check_shape(std::span<const float> x, std::span<const float> signs, int64_t block) {
  if (!is_power_of_two(block))
    fail(ErrorKind::kInternal, "hadamard block size {} is not a power of two", block);
  if (static_cast<int64_t>(x.size()) % block != 0) {
    fail(ErrorKind::kInternal, "hadamard input width {} is not a multiple of block size {}", x.size(), block);
  }
  if (!signs.empty() && signs.size() != x.size()) {
    fail(ErrorKind::kInternal, "hadamard sign vector has {} entries for an input of width {}", signs.size(),
         x.size());
  }
}

void scale_all(std::span<float> x, float scale) {
  for (float& v : x) v *= scale;
}

void multiply_signs(std::span<float> x, std::span<const float> signs) {
  for (size_t i = 0; i < signs.size(); ++i) x[i] *= signs[i];
}

void fwht_blocks(std::span<float> x, int64_t block) {
  for (size_t start = 0; start < x.size(); start += static_cast<size_t>(block)) fwht(x.data() + start, block);
}

}  // namespace

// Exact when n is a power of 4 (e.g. 1024 -> 1/32); for odd powers of two (32, 128, 512) it is the
// rounded fp32 value, applied before the butterflies as the reference does (model-spec §4.1), so our
// rounding matches theirs.
float block_scale(int64_t block) {
  return 1.0f / std::sqrt(static_cast<float>(block));
}

void fwht(float* x, int64_t n) {
  // Sylvester order: after the stage of width h, x holds H_{2h} applied to every aligned 2h-chunk.
  for (int64_t h = 1; h < n; h *= 2) {
    for (int64_t i = 0; i < n; i += 2 * h) {
      for (int64_t j = i; j < i + h; ++j) {
        const float a = x[j];
        const float b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
    }
  }
}

void forward(std::span<float> x, std::span<const float> signs, int64_t block) {
  check_shape(x, signs, block);
  multiply_signs(x, signs);
  scale_all(x, block_scale(block));
  fwht_blocks(x, block);
}

void inverse(std::span<float> z, std::span<const float> signs, int64_t block) {
  check_shape(z, signs, block);
  scale_all(z, block_scale(block));
  fwht_blocks(z, block);
  multiply_signs(z, signs);
}

}  // namespace tern::hadamard
