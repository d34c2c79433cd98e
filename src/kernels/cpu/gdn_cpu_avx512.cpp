// AVX-512 twin of gdn_cpu.cpp's recurrence (compiled for AVX-512): a task is a 128-column slab, the whole
// of a 27B head, whose r and p fit in sixteen zmm registers. The sweep then reads the head's state as one
// sequential 64 KiB stream, where the 32-column AVX2 blocks read it as 128-byte pieces at a 512-byte
// stride that the prefetchers follow badly. Both run gdn_recurrence.h, so the two give the same bits.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/gdn_recurrence.h"

namespace tern::kernels::cpu {

namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec x) { _mm512_storeu_ps(p, x); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec fnmadd(Vec a, Vec b, Vec c) { return _mm512_fnmadd_ps(a, b, c); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
};

// A narrower last slab goes to the AVX2 kernel in its own blocks.
void recurrent_columns_avx512(const GdnHead& h, int64_t j0, int64_t j1) {
  if (j1 - j0 == kSlabColumns) {
    gdn_recurrent_block<Avx512, kSlabColumns / Avx512::kLanes>(h, j0);
    return;
  }
  const GdnKernels& avx2 = gdn_kernels_avx2();
  for (int64_t j = j0; j < j1; j += avx2.column_block)
    avx2.recurrent_columns(h, j, std::min(j1, j + avx2.column_block));
}

}  // namespace

const GdnKernels& gdn_kernels_avx512() {
  static constexpr GdnKernels kKernels{"avx512", kSlabColumns, recurrent_columns_avx512};
  return kKernels;
}

}  // namespace tern::kernels::cpu
