#include <immintrin.h>

#include <initializer_list>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_avxvnni(int64_t iterations) {
  // Ten chains on ymm, in assembly as in the AVX-512 probe (fourteen registers of the sixteen).
  const __m256i c0 = _mm256_set1_epi8(1), c1 = _mm256_set1_epi8(2), x0 = _mm256_set1_epi8(3),
                x1 = _mm256_set1_epi8(4);
  __m256i a0 = _mm256_set1_epi32(0), a1 = _mm256_set1_epi32(1), a2 = _mm256_set1_epi32(2),
          a3 = _mm256_set1_epi32(3), a4 = _mm256_set1_epi32(4), a5 = _mm256_set1_epi32(5),
          a6 = _mm256_set1_epi32(6), a7 = _mm256_set1_epi32(7), a8 = _mm256_set1_epi32(8),
          a9 = _mm256_set1_epi32(9);
  for (int64_t i = 0; i < iterations; ++i) {
    __asm__ volatile(
        "%{vex%} vpdpbusd %[x0], %[c0], %[a0]\n\t"
        "%{vex%} vpdpbusd %[x0], %[c1], %[a1]\n\t"
        "%{vex%} vpdpbusd %[x1], %[c0], %[a2]\n\t"
        "%{vex%} vpdpbusd %[x1], %[c1], %[a3]\n\t"
        "%{vex%} vpdpbusd %[x0], %[c0], %[a4]\n\t"
        "%{vex%} vpdpbusd %[x0], %[c1], %[a5]\n\t"
        "%{vex%} vpdpbusd %[x1], %[c0], %[a6]\n\t"
        "%{vex%} vpdpbusd %[x1], %[c1], %[a7]\n\t"
        "%{vex%} vpdpbusd %[x0], %[c0], %[a8]\n\t"
        "%{vex%} vpdpbusd %[x0], %[c1], %[a9]\n\t"
        : [a0] "+x"(a0), [a1] "+x"(a1), [a2] "+x"(a2), [a3] "+x"(a3), [a4] "+x"(a4), [a5] "+x"(a5),
          [a6] "+x"(a6), [a7] "+x"(a7), [a8] "+x"(a8), [a9] "+x"(a9)
        : [c0] "x"(c0), [c1] "x"(c1), [x0] "x"(x0), [x1] "x"(x1));
  }
  // The asm is volatile, so no round can be dropped; the xor only gives the caller one value of them all.
  __m256i total = a0;
  for (const __m256i& a : {a1, a2, a3, a4, a5, a6, a7, a8, a9}) total = _mm256_xor_si256(total, a);
  return _mm256_extract_epi64(total, 0);
}

}  // namespace tern::kernels::cpu
