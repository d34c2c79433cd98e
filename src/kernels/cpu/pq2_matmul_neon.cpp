// ARMv8.0 NEON PQ2_0 × two-digit int8 kernel (no dot-product extension). Per digit plane and half
// block: four widening multiply-accumulates (s8 × s8 into int16: at most 4·3·127 = 1524, no overflow)
// for each 8-byte half, then two pairwise widening adds bring each lane's four bytes into int32.
#include <arm_neon.h>

#include "kernels/cpu/pq2_neon.h"

namespace tern::kernels::cpu {

namespace {

struct WideningDot {
  static int32x4_t lanes(int32x4_t init, const neon::Codes& codes, const int8_t* plane, int h) {
    int8x16_t x = vld1q_s8(plane + 16 * h);
    int16x8_t low = vmull_s8(vget_low_s8(codes.c[h]), vget_low_s8(x));
    int16x8_t high = vmull_high_s8(codes.c[h], x);
    for (int s = 1; s < 4; ++s) {
      x = vld1q_s8(plane + 32 * s + 16 * h);
      low = vmlal_s8(low, vget_low_s8(codes.c[2 * s + h]), vget_low_s8(x));
      high = vmlal_high_s8(high, codes.c[2 * s + h], x);
    }
    return vaddq_s32(init, vpaddq_s32(vpaddlq_s16(low), vpaddlq_s16(high)));
  }
};

}  // namespace

void pq2_rows_neon(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end) {
  tiling::rows<tiling::BlockTiles<neon::Lanes<WideningDot>>, 4, 2, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
