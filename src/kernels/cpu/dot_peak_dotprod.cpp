#include <arm_neon.h>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_dotprod(int64_t iterations) {
  // Two code vectors x four activation vectors, eight chains of SDOT (s8 x s8 summed by fours into int32).
  const int8x16_t codes[2] = {vdupq_n_s8(1), vdupq_n_s8(2)};
  int8x16_t x[4];
  int32x4_t acc[8];
  for (int c = 0; c < 4; ++c) x[c] = vdupq_n_s8(static_cast<int8_t>(c));
  for (int c = 0; c < 8; ++c) acc[c] = vdupq_n_s32(0);
  for (int64_t i = 0; i < iterations; ++i) {
    __asm__ volatile("" : "+w"(x[0]), "+w"(x[1]), "+w"(x[2]), "+w"(x[3]));
    for (int c = 0; c < 8; ++c) acc[c] = vdotq_s32(acc[c], codes[c / 4], x[c % 4]);
  }
  int32x4_t total = acc[0];
  for (int c = 1; c < 8; ++c) total = veorq_s32(total, acc[c]);
  return vgetq_lane_s64(vreinterpretq_s64_s32(total), 0);
}

}  // namespace tern::kernels::cpu
