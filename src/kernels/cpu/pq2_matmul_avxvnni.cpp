// AVX-VNNI PQ2_0 kernel (AVX2 + the VEX-encoded `vpdpbusd` of Alder Lake and later client cores, Zen 5,
// Sierra Forest: CPUs that have VNNI on ymm but no AVX-512). The AVX2 kernel's lanes and float steps
// (pq2_avx2_lanes.h), with each lane's four bytes of a field and digit summed straight into int32 by one
// `vpdpbusd`: eight per row and block, against the AVX2 kernel's eight `vpmaddubsw`, six int16 adds
// and two `vpmaddwd`. Same integers, so the same bits as pq2_rows_avx2.
#include "kernels/cpu/pq2_avx2_lanes.h"

namespace tern::kernels::cpu {

namespace {

struct VnniDot {
  static __m256i field_mask() { return _mm256_set1_epi8(3); }
  // Four chains of two (hi and lo digit, fields 0–1 and 2–3), so a block's products do not wait on one
  // accumulator (about five cycles each); the lo chain of fields 0–1 starts from the negated lane sums.
  static __m256i lanes(const __m256i (&codes)[4], const __m256i* x, __m256i neg_sums) {
    const auto digit = [&](int plane, int s) { return _mm256_load_si256(x + 4 * plane + s); };
    const __m256i zero = _mm256_setzero_si256();
    __m256i hi01 = _mm256_dpbusd_avx_epi32(zero, codes[0], digit(0, 0));
    __m256i hi23 = _mm256_dpbusd_avx_epi32(zero, codes[2], digit(0, 2));
    __m256i lo01 = _mm256_dpbusd_avx_epi32(neg_sums, codes[0], digit(1, 0));
    __m256i lo23 = _mm256_dpbusd_avx_epi32(zero, codes[2], digit(1, 2));
    hi01 = _mm256_dpbusd_avx_epi32(hi01, codes[1], digit(0, 1));
    hi23 = _mm256_dpbusd_avx_epi32(hi23, codes[3], digit(0, 3));
    lo01 = _mm256_dpbusd_avx_epi32(lo01, codes[1], digit(1, 1));
    lo23 = _mm256_dpbusd_avx_epi32(lo23, codes[3], digit(1, 3));
    return _mm256_add_epi32(_mm256_slli_epi32(_mm256_add_epi32(hi01, hi23), 8), _mm256_add_epi32(lo01, lo23));
  }
};

}  // namespace

void pq2_rows_avxvnni(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end) {
  tiling::rows<tiling::BlockTiles<Avx2Lanes<VnniDot>>, 6, 3, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
