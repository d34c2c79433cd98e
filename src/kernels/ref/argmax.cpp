#include "kernels/ref/argmax.h"

namespace tern::kernels::ref {

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best] || (x[best] != x[best] && x[i] == x[i])) best = i;  // strict >: first max stays
  }
  return best;
}

}  // namespace tern::kernels::ref
