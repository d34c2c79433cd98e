// Seeded random inputs for the kernel tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace tern::testing_support {

// Activations as the kernels see them after a Hadamard site: unit Gaussians with a rare outlier
// (one value in `outlier_every` scaled by `outlier_scale`).
inline std::vector<float> random_acts(int64_t n, uint32_t seed, uint32_t outlier_every, float outlier_scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng) * (rng() % outlier_every == 0 ? outlier_scale : 1.0f);
  return x;
}

// n Gaussians of standard deviation `scale`.
inline std::vector<float> gaussian(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng) * scale;
  return x;
}

}  // namespace tern::testing_support
