#include "kernels/ref/argmax.h"

namespace tern::kernels::ref {

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best] || (x[best] != x[best] && x[i] == x[i])) best = i;  // strict >: first max stays
  }
  return best;
}

void ArgmaxFold::take_run(const float* x, int64_t first, int64_t n) {
  ArgmaxFold run;
  int64_t i = 0;
  for (; i < n && run.index < 0; ++i) run.take(x[i], first + i);  // up to the first non-NaN value
  for (; i < n; ++i) {
    if (x[i] > run.value) {  // in index order a later equal value never wins; NaN compares false
      run.value = x[i];
      run.index = first + i;
    }
  }
  take(run);
}

}  // namespace tern::kernels::ref
