#include "kernels/ref/l2_norm.h"

#include <cmath>

namespace tern::kernels::ref {

void l2_norm(float* x, int64_t n, float eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(sum_sq + static_cast<double>(eps));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * scale);
}

}  // namespace tern::kernels::ref
