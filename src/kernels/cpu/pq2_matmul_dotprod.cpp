// AArch64 PQ2_0 × two-digit int8 kernel with the dot-product extension: per digit plane and half
// block, four SDOT (s8 × s8 summed by fours straight into the int32 lanes; a code 0..3 is a valid s8).
#include <arm_neon.h>

#include "kernels/cpu/pq2_neon.h"

namespace tern::kernels::cpu {

namespace {

struct Sdot {
  static int32x4_t lanes(int32x4_t init, const neon::Codes& codes, const int8_t* plane, int h) {
    for (int s = 0; s < 4; ++s) init = vdotq_s32(init, codes.c[2 * s + h], vld1q_s8(plane + 32 * s + 16 * h));
    return init;
  }
};

}  // namespace

void pq2_rows_dotprod(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end) {
  tiling::rows<tiling::BlockTiles<neon::Lanes<Sdot>>, 4, 2, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
