// The GDN q/k normalisation in HF's form (model-spec §5.4, §8.3): x · rsqrt(Σ x² + 1e-6).
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

inline constexpr float kL2NormEps = 1e-6f;

// In place over n values; the sum of squares in double.
void l2_norm(float* x, int64_t n, float eps = kL2NormEps);

}  // namespace tern::kernels::ref
