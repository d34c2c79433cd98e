#include "kernels/ref/argmax.h"

namespace tern::kernels::ref {

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best] || (x[best] != x[best] && x[i] == x[i])) best = i;  // strict >: first max stays
  }
  return best;
}

void argmax_rows(int32_t* best, const float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) best[r] = static_cast<int32_t>(argmax(y + r * n, n));
}

void ArgmaxFold::take_run(const float* x, int64_t first, int64_t n) {
  if (n <= 0) return;
  const int64_t i = argmax(x, n);  // a NaN only where the whole run is NaN, which take() ignores
  take(x[i], first + i);
}

}  // namespace tern::kernels::ref
