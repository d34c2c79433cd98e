#include <immintrin.h>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_avx2(int64_t iterations) {
  // Two code vectors x four activation vectors give eight distinct products per round (nothing to
  // share), each accumulated into its own chain; 14 registers, no spills.
  const __m256i codes[2] = {_mm256_set1_epi8(1), _mm256_set1_epi8(2)};
  __m256i x[4];
  __m256i acc[8];
  for (int c = 0; c < 4; ++c) x[c] = _mm256_set1_epi8(static_cast<char>(c));
  for (int c = 0; c < 8; ++c) acc[c] = _mm256_setzero_si256();
  for (int64_t i = 0; i < iterations; ++i) {
    // The empty asm makes the activations opaque each round, so no product is hoisted out of the loop.
    __asm__ volatile("" : "+x"(x[0]), "+x"(x[1]), "+x"(x[2]), "+x"(x[3]));
    for (int c = 0; c < 8; ++c)
      acc[c] = _mm256_add_epi16(acc[c], _mm256_maddubs_epi16(codes[c / 4], x[c % 4]));
  }
  __m256i total = acc[0];
  for (int c = 1; c < 8; ++c) total = _mm256_xor_si256(total, acc[c]);
  return _mm256_extract_epi64(total, 0);
}

}  // namespace tern::kernels::cpu
