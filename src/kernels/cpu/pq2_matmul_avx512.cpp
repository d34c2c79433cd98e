// AVX-512 VNNI PQ2_0 × two-digit int8 kernel. Per 128-weight block and row: the 32 qs bytes broadcast to
// both halves of a zmm and shifted per half, giving two code vectors [c0|c1] and [c2|c3]. Per token: one
// int32 chain from −Σ hi through two dpbusd on the hi plane (u8 code × s8 digit summed into int32
// directly), a shift by 8, two dpbusd on the lo plane and − Σ lo; one convert and one FMA with d_w times
// the sixteen lane steps.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu {

namespace {

struct Avx512Vnni {
  struct Codes {
    __m512i c01, c23;
    __m512 d_w;
  };
  using Acc = __m512;

  static Acc zero() { return _mm512_setzero_ps(); }

  static Codes unpack(const uint8_t* block) {
    const __m512i low2 = _mm512_set1_epi8(3);
    const __m512i qs =
        _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2)));
    uint16_t bits;
    std::memcpy(&bits, block, sizeof bits);
    return Codes{_mm512_and_si512(_mm512_srlv_epi64(qs, _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0)), low2),
                 _mm512_and_si512(_mm512_srlv_epi64(qs, _mm512_set_epi64(6, 6, 6, 6, 4, 4, 4, 4)), low2),
                 _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(bits)))};
  }

  // Σ (code − 1)·(256·hi + lo) per lane, as one chain: start from −Σ hi, add the hi products, shift
  // by 8, add the lo products, subtract Σ lo.
  static Acc step(Acc acc, const Codes& codes, const QuantizedActs& a, int64_t token, int64_t b) {
    const __m512i* q = reinterpret_cast<const __m512i*>(a.token_q(token) + b * kActBlockBytes);
    const __m512i* sums = reinterpret_cast<const __m512i*>(a.token_zmm_sums(token) + b * kZmmSums);
    __m512i dot = _mm512_dpbusd_epi32(_mm512_load_si512(sums), codes.c01, _mm512_load_si512(q));
    dot = _mm512_slli_epi32(_mm512_dpbusd_epi32(dot, codes.c23, _mm512_load_si512(q + 1)), 8);
    dot = _mm512_dpbusd_epi32(dot, codes.c01, _mm512_load_si512(q + 2));
    dot = _mm512_dpbusd_epi32(dot, codes.c23, _mm512_load_si512(q + 3));
    dot = _mm512_sub_epi32(dot, _mm512_load_si512(sums + 1));
    const __m512 scale = _mm512_mul_ps(codes.d_w, _mm512_load_ps(a.token_zmm_scales(token) + b * kZmmLanes));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc);
  }

  static float sum(Acc v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

void pq2_rows_avx512(float* y, int64_t y_stride, const Pq2Matrix& w, const QuantizedActs& a,
                     int64_t row_begin, int64_t row_end) {
  tiling::rows<Avx512Vnni, 4, 4, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
