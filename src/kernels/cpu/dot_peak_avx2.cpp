#include <immintrin.h>

#include <initializer_list>

#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_chains_avx2(int64_t iterations) {
  // Ten chains of `vpmaddubsw` + `vpaddw` (about six cycles each; two ports run the multiply), written in
  // assembly as the AVX-512 probe is, so the compiler neither merges nor copies them: fifteen of the
  // sixteen registers with the two code vectors, two activation vectors and one product.
  const __m256i c0 = _mm256_set1_epi8(1), c1 = _mm256_set1_epi8(2), x0 = _mm256_set1_epi8(3),
                x1 = _mm256_set1_epi8(4);
  __m256i a0 = _mm256_set1_epi16(0), a1 = _mm256_set1_epi16(1), a2 = _mm256_set1_epi16(2),
          a3 = _mm256_set1_epi16(3), a4 = _mm256_set1_epi16(4), a5 = _mm256_set1_epi16(5),
          a6 = _mm256_set1_epi16(6), a7 = _mm256_set1_epi16(7), a8 = _mm256_set1_epi16(8),
          a9 = _mm256_set1_epi16(9);
  for (int64_t i = 0; i < iterations; ++i) {
    __m256i t;
    __asm__ volatile(
        "vpmaddubsw %[x0], %[c0], %[t]\n\t"
        "vpaddw %[t], %[a0], %[a0]\n\t"
        "vpmaddubsw %[x0], %[c1], %[t]\n\t"
        "vpaddw %[t], %[a1], %[a1]\n\t"
        "vpmaddubsw %[x1], %[c0], %[t]\n\t"
        "vpaddw %[t], %[a2], %[a2]\n\t"
        "vpmaddubsw %[x1], %[c1], %[t]\n\t"
        "vpaddw %[t], %[a3], %[a3]\n\t"
        "vpmaddubsw %[x0], %[c0], %[t]\n\t"
        "vpaddw %[t], %[a4], %[a4]\n\t"
        "vpmaddubsw %[x0], %[c1], %[t]\n\t"
        "vpaddw %[t], %[a5], %[a5]\n\t"
        "vpmaddubsw %[x1], %[c0], %[t]\n\t"
        "vpaddw %[t], %[a6], %[a6]\n\t"
        "vpmaddubsw %[x1], %[c1], %[t]\n\t"
        "vpaddw %[t], %[a7], %[a7]\n\t"
        "vpmaddubsw %[x0], %[c0], %[t]\n\t"
        "vpaddw %[t], %[a8], %[a8]\n\t"
        "vpmaddubsw %[x0], %[c1], %[t]\n\t"
        "vpaddw %[t], %[a9], %[a9]\n\t"
        : [t] "=&x"(t), [a0] "+x"(a0), [a1] "+x"(a1), [a2] "+x"(a2), [a3] "+x"(a3), [a4] "+x"(a4),
          [a5] "+x"(a5), [a6] "+x"(a6), [a7] "+x"(a7), [a8] "+x"(a8), [a9] "+x"(a9)
        : [c0] "x"(c0), [c1] "x"(c1), [x0] "x"(x0), [x1] "x"(x1));
  }
  // The asm is volatile, so no round can be dropped; the xor only gives the caller one value of them all.
  __m256i total = a0;
  for (const __m256i& a : {a1, a2, a3, a4, a5, a6, a7, a8, a9}) total = _mm256_xor_si256(total, a);
  return _mm256_extract_epi64(total, 0);
}

}  // namespace tern::kernels::cpu
