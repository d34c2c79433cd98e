// AVX-512 VNNI PQ2_0 kernel in lane order, the decode kernel (pq2_matmul.h). Per 128-weight block, row
// and token: sixteen exact lane dots (pq2_avx512.h), then one convert and one FMA with d_w times the
// sixteen lane steps. The lanes are summed once per row, at the end: no reduction across lanes per block,
// which is what the group order pays for.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/pq2_avx512.h"
#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu {

namespace {

struct Avx512Lanes {
  struct Codes {
    avx512::Codes codes;
    __m512 d_w;
  };
  using Acc = __m512;

  static Acc zero() { return _mm512_setzero_ps(); }

  static Codes unpack(const uint8_t* block) {
    uint16_t bits;
    std::memcpy(&bits, block, sizeof bits);
    return Codes{avx512::unpack(block), avx512::broadcast_scale(bits)};
  }

  static Acc step(Acc acc, const Codes& codes, const QuantizedActs& a, int64_t token, int64_t b) {
    return avx512::lane_step(acc, codes.codes, codes.d_w, avx512::LaneActs(a, token), b);
  }

  static float sum(Acc v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

void pq2_rows_avx512_lanes(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                           int64_t row_begin, int64_t row_end) {
  tiling::rows<tiling::BlockTiles<Avx512Lanes>, 4, 4, 4>(y, y_stride, w, a, row_begin, row_end);
}

}  // namespace tern::kernels::cpu
