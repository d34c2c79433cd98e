// AVX2 PQ2_0 × two-digit int8 kernel. Per 128-weight block and row: one 32-byte load of qs and four
// (qs >> 2s) & 3 code vectors. Per token: eight maddubs (u8 code × s8 digit; four per digit plane,
// summed in int16: at most 4·2·3·127 = 3048, no saturation), two madd to int32 that also weigh the hi
// plane by 256, minus the lanes' sums (the "− Σ x" term, exact), one convert, and one FMA with d_w times
// the eight lane steps.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu {

namespace {

struct Avx2 {
  struct Codes {
    __m256i c[4];
    __m256 d_w;
  };
  using Acc = __m256;

  static Acc zero() { return _mm256_setzero_ps(); }

  static Codes unpack(const uint8_t* block) {
    const __m256i low2 = _mm256_set1_epi8(3);
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    uint16_t bits;
    std::memcpy(&bits, block, sizeof bits);
    return Codes{
        {_mm256_and_si256(qs, low2), _mm256_and_si256(_mm256_srli_epi16(qs, 2), low2),
         _mm256_and_si256(_mm256_srli_epi16(qs, 4), low2), _mm256_and_si256(_mm256_srli_epi16(qs, 6), low2)},
        _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(bits)))};
  }

  // Σ code · digit over the four vectors of one digit plane, as int16 pair sums.
  static __m256i plane_dot(const Codes& codes, const int8_t* plane) {
    const __m256i* x = reinterpret_cast<const __m256i*>(plane);
    const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(codes.c[0], _mm256_load_si256(x)),
                                         _mm256_maddubs_epi16(codes.c[1], _mm256_load_si256(x + 1)));
    const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(codes.c[2], _mm256_load_si256(x + 2)),
                                         _mm256_maddubs_epi16(codes.c[3], _mm256_load_si256(x + 3)));
    return _mm256_add_epi16(p01, p23);
  }

  static Acc step(Acc acc, const Codes& codes, const QuantizedActs& a, int64_t token, int64_t b) {
    const int8_t* q = a.token_q(token) + b * kActBlockBytes;
    const __m256i hi = _mm256_madd_epi16(plane_dot(codes, q), _mm256_set1_epi16(256));
    const __m256i lo = _mm256_madd_epi16(plane_dot(codes, q + kActBlock), _mm256_set1_epi16(1));
    const __m256i neg_sums =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(a.token_ymm_neg_sums(token) + b * kYmmLanes));
    const __m256i dot = _mm256_add_epi32(_mm256_add_epi32(hi, lo), neg_sums);
    const __m256 scale = _mm256_mul_ps(codes.d_w, _mm256_load_ps(a.token_ymm_scales(token) + b * kYmmLanes));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc);
  }

  static float sum(Acc v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace

void pq2_rows_avx2(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end) {
  tiling::rows<tiling::BlockTiles<Avx2>, 4, 2, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
