#include <immintrin.h>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_avx512(int64_t iterations) {
  // Twelve chains: a dpbusd waits about six cycles for its accumulator and two ports run it on recent
  // cores (Sapphire/Emerald Rapids), so eight chains measured only two thirds of the peak (251 against
  // 370 G MAC/s a core, 11-30). Each chain takes one of the products of two code vectors and four
  // activation vectors into its own int32 accumulator, a named variable: in an array GCC -O3 kept them
  // in memory and stored every one each round.
  const __m512i c0 = _mm512_set1_epi8(1), c1 = _mm512_set1_epi8(2);
  __m512i x0 = _mm512_set1_epi8(3), x1 = _mm512_set1_epi8(4), x2 = _mm512_set1_epi8(5),
          x3 = _mm512_set1_epi8(6);
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0,
          a9 = a0, a10 = a0, a11 = a0;
  for (int64_t i = 0; i < iterations; ++i) {
    __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3));
    a0 = _mm512_dpbusd_epi32(a0, c0, x0);
    a1 = _mm512_dpbusd_epi32(a1, c1, x0);
    a2 = _mm512_dpbusd_epi32(a2, c0, x1);
    a3 = _mm512_dpbusd_epi32(a3, c1, x1);
    a4 = _mm512_dpbusd_epi32(a4, c0, x2);
    a5 = _mm512_dpbusd_epi32(a5, c1, x2);
    a6 = _mm512_dpbusd_epi32(a6, c0, x3);
    a7 = _mm512_dpbusd_epi32(a7, c1, x3);
    a8 = _mm512_dpbusd_epi32(a8, c0, x0);
    a9 = _mm512_dpbusd_epi32(a9, c1, x0);
    a10 = _mm512_dpbusd_epi32(a10, c0, x1);
    a11 = _mm512_dpbusd_epi32(a11, c1, x1);
  }
  const __m512i total =
      _mm512_xor_si512(_mm512_xor_si512(_mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3)),
                                        _mm512_xor_si512(_mm512_xor_si512(a4, a5), _mm512_xor_si512(a6, a7))),
                       _mm512_xor_si512(_mm512_xor_si512(a8, a9), _mm512_xor_si512(a10, a11)));
  return _mm512_reduce_add_epi64(total);
}

}  // namespace tern::kernels::cpu
