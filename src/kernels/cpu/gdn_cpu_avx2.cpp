// AVX2 + FMA twins of gdn_cpu.cpp's kernels (compiled with -mavx2 -mfma -mf16c).
#include <immintrin.h>

#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/gdn_recurrence.h"

namespace tern::kernels::cpu {

namespace {

struct Avx2 {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec x) { _mm256_storeu_ps(p, x); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec fnmadd(Vec a, Vec b, Vec c) { return _mm256_fnmadd_ps(a, b, c); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
};

void recurrent_columns_avx2(const GdnHead& h, int64_t j0, int64_t j1) {
  if (j1 - j0 == 32) {
    gdn_recurrent_block<Avx2, 4>(h, j0);
    return;
  }
  int64_t j = j0;
  for (; j + 8 <= j1; j += 8) gdn_recurrent_block<Avx2, 1>(h, j);
  if (j < j1) gdn_kernels_scalar().recurrent_columns(h, j, j1);
}

}  // namespace

const GdnKernels& gdn_kernels_avx2() {
  static_assert(kColumnBlock == 32, "recurrent_columns_avx2 takes whole blocks as 4 vectors");
  static constexpr GdnKernels kKernels{"avx2", kColumnBlock, recurrent_columns_avx2};
  return kKernels;
}

}  // namespace tern::kernels::cpu
