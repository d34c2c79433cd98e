// Causal depthwise convolution over a chunk of tokens with a rolling state (model-spec §5.4):
// the state holds the last kernel−1 raw inputs, oldest first; tap kernel−1 is the current token.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// in, out: [n_tokens][channels]; state: [kernel−1][channels]; weight: [channels][kernel] (GGUF
// ne = [kernel, channels], taps contiguous per channel). Output t is Σ_i weight[c][i] · window[t+i][c]
// over window = [state rows | in rows], summed in double; no bias, no activation. On return the state
// holds the last kernel−1 rows of the window. out must not alias in.
void causal_conv(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                 int64_t channels, int64_t kernel);

}  // namespace tern::kernels::ref
