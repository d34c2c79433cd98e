#include <arm_neon.h>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_neon(int64_t iterations) {
  // Two code vectors x four activation vectors, eight chains of widening multiply-accumulates (s8 x s8
  // into int16, the ARMv8.0 kernel's product); 14 registers.
  const int8x8_t codes[2] = {vdup_n_s8(1), vdup_n_s8(2)};
  int8x8_t x[4];
  int16x8_t acc[8];
  for (int c = 0; c < 4; ++c) x[c] = vdup_n_s8(static_cast<int8_t>(c));
  for (int c = 0; c < 8; ++c) acc[c] = vdupq_n_s16(0);
  for (int64_t i = 0; i < iterations; ++i) {
    // The empty asm makes the activations opaque each round, so no product is hoisted out of the loop.
    __asm__ volatile("" : "+w"(x[0]), "+w"(x[1]), "+w"(x[2]), "+w"(x[3]));
    for (int c = 0; c < 8; ++c) acc[c] = vmlal_s8(acc[c], codes[c / 4], x[c % 4]);
  }
  int16x8_t total = acc[0];
  for (int c = 1; c < 8; ++c) total = veorq_s16(total, acc[c]);
  return vgetq_lane_s64(vreinterpretq_s64_s16(total), 0);
}

}  // namespace tern::kernels::cpu
