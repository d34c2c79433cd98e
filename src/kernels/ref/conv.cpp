#include "kernels/ref/conv.h"

namespace tern::kernels::ref {

void causal_conv(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                 int64_t channels, int64_t kernel) {
  const int64_t history = kernel - 1;
  // Row w of the window [state | in], w in [0, history + n_tokens).
  auto window = [&](int64_t w, int64_t c) {
    return w < history ? state[w * channels + c] : in[(w - history) * channels + c];
  };
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t c = 0; c < channels; ++c) {
      double acc = 0.0;
      for (int64_t i = 0; i < kernel; ++i)
        acc += static_cast<double>(weight[c * kernel + i]) * window(t + i, c);
      out[t * channels + c] = static_cast<float>(acc);
    }
  }
  // New state = window rows [n_tokens, n_tokens + history). Row i is read from row n_tokens + i ≥ i,
  // so ascending order never reads a state row already overwritten.
  for (int64_t i = 0; i < history; ++i) {
    for (int64_t c = 0; c < channels; ++c) state[i * channels + c] = window(n_tokens + i, c);
  }
}

}  // namespace tern::kernels::ref
