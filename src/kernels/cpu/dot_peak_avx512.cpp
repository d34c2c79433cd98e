#include <immintrin.h>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_avx512(int64_t iterations) {
  // As the AVX2 probe: eight distinct u8 × s8 products per round, each dpbusd into its own int32 chain.
  const __m512i codes[2] = {_mm512_set1_epi8(1), _mm512_set1_epi8(2)};
  __m512i x[4];
  __m512i acc[8];
  for (int c = 0; c < 4; ++c) x[c] = _mm512_set1_epi8(static_cast<char>(c));
  for (int c = 0; c < 8; ++c) acc[c] = _mm512_setzero_si512();
  for (int64_t i = 0; i < iterations; ++i) {
    __asm__ volatile("" : "+v"(x[0]), "+v"(x[1]), "+v"(x[2]), "+v"(x[3]));
    for (int c = 0; c < 8; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], codes[c / 4], x[c % 4]);
  }
  __m512i total = acc[0];
  for (int c = 1; c < 8; ++c) total = _mm512_xor_si512(total, acc[c]);
  return _mm512_reduce_add_epi64(total);
}

}  // namespace tern::kernels::cpu
