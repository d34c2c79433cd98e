// AVX2 PQ2_0 × two-digit int8 kernel. Per 128-weight block and row: one 32-byte load of qs and four
// (qs >> 2s) & 3 code vectors. Per token: eight maddubs (u8 code × s8 digit; four per digit plane,
// summed in int16: at most 4·2·3·127 = 3048, no saturation), two madd to int32 that also weigh the hi
// plane by 256, minus the lanes' sums (the "− Σ x" term, exact), one convert, and one FMA with d_w times
// the eight lane steps (pq2_avx2_lanes.h).
#include "kernels/cpu/maddubs_dot_avx2.h"
#include "kernels/cpu/pq2_avx2_lanes.h"

namespace tern::kernels::cpu {

void pq2_rows_avx2(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end) {
  using PromptTiles = tiling::BlockTiles<Avx2Lanes<MaddubsDot<false>>>;
  using DecodeTiles = tiling::BlockTiles<Avx2Lanes<MaddubsDot<true>>>;
  tiling::rows<PromptTiles, 4, 2, 4, DecodeTiles>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
