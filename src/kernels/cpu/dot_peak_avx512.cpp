#include <immintrin.h>

#include <initializer_list>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_avx512(int64_t iterations) {
  // Twelve chains: a dpbusd waits about six cycles for its accumulator and two ports run it on recent
  // cores (Sapphire/Emerald Rapids), so eight chains keep too few in flight. The round is written in
  // assembly: from intrinsics GCC merged chains that start alike and take the same product, and at -O3
  // copied every accumulator each round; the asm is opaque to both.
  const __m512i c0 = _mm512_set1_epi8(1), c1 = _mm512_set1_epi8(2), x0 = _mm512_set1_epi8(3),
                x1 = _mm512_set1_epi8(4);
  __m512i a0 = _mm512_set1_epi32(0), a1 = _mm512_set1_epi32(1), a2 = _mm512_set1_epi32(2),
          a3 = _mm512_set1_epi32(3), a4 = _mm512_set1_epi32(4), a5 = _mm512_set1_epi32(5),
          a6 = _mm512_set1_epi32(6), a7 = _mm512_set1_epi32(7), a8 = _mm512_set1_epi32(8),
          a9 = _mm512_set1_epi32(9), a10 = _mm512_set1_epi32(10), a11 = _mm512_set1_epi32(11);
  for (int64_t i = 0; i < iterations; ++i) {
    __asm__ volatile(
        "vpdpbusd %[x0], %[c0], %[a0]\n\t"
        "vpdpbusd %[x0], %[c1], %[a1]\n\t"
        "vpdpbusd %[x1], %[c0], %[a2]\n\t"
        "vpdpbusd %[x1], %[c1], %[a3]\n\t"
        "vpdpbusd %[x0], %[c0], %[a4]\n\t"
        "vpdpbusd %[x0], %[c1], %[a5]\n\t"
        "vpdpbusd %[x1], %[c0], %[a6]\n\t"
        "vpdpbusd %[x1], %[c1], %[a7]\n\t"
        "vpdpbusd %[x0], %[c0], %[a8]\n\t"
        "vpdpbusd %[x0], %[c1], %[a9]\n\t"
        "vpdpbusd %[x1], %[c0], %[a10]\n\t"
        "vpdpbusd %[x1], %[c1], %[a11]\n\t"
        : [a0] "+v"(a0), [a1] "+v"(a1), [a2] "+v"(a2), [a3] "+v"(a3), [a4] "+v"(a4), [a5] "+v"(a5),
          [a6] "+v"(a6), [a7] "+v"(a7), [a8] "+v"(a8), [a9] "+v"(a9), [a10] "+v"(a10), [a11] "+v"(a11)
        : [c0] "v"(c0), [c1] "v"(c1), [x0] "v"(x0), [x1] "v"(x1));
  }
  // The asm is volatile, so no round can be dropped; the xor only gives the caller one value of them all.
  __m512i total = a0;
  for (const __m512i& a : {a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11}) total = _mm512_xor_si512(total, a);
  return _mm512_reduce_add_epi64(total);
}

}  // namespace tern::kernels::cpu
