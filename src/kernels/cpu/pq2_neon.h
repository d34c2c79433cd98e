// The lane-order PQ2_0 policy for AArch64 (pq2_tile.h's Isa), shared by the NEON and the SDOT kernels,
// which differ only in how a digit plane's products reach the int32 lanes (the Dot parameter). Lane l
// (0..7) sums qs bytes 4l..4l+3 of all four 2-bit fields, as the AVX2 kernel's ymm lanes do, and the
// float steps are the AVX2 kernel's one for one: the same bits on every lane-order kernel.
// Included only by pq2_matmul_neon.cpp and pq2_matmul_dotprod.cpp.
#pragma once

#include <arm_neon.h>

#include <cstring>

#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu::neon {

// A block's codes: field s of qs bytes 16h..16h+15 in c[2s + h] (each 0..3, so also a valid s8).
struct Codes {
  int8x16_t c[8];
  float32x4_t d_w;
};

inline Codes unpack(const uint8_t* block) {
  const uint8x16_t low2 = vdupq_n_u8(3);
  Codes out;
  for (int h = 0; h < 2; ++h) {
    const uint8x16_t qs = vld1q_u8(block + 2 + 16 * h);
    out.c[h] = vreinterpretq_s8_u8(vandq_u8(qs, low2));
    out.c[2 + h] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(qs, 2), low2));
    out.c[4 + h] = vreinterpretq_s8_u8(vandq_u8(vshrq_n_u8(qs, 4), low2));
    out.c[6 + h] = vreinterpretq_s8_u8(vshrq_n_u8(qs, 6));
  }
  uint16_t bits;
  std::memcpy(&bits, block, sizeof bits);
  out.d_w = vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(bits)));
  return out;
}

// Dot::lanes(init, codes, plane, h) = init + Σ code · digit over one digit plane (128 bytes), for the
// four lanes 4h..4h+3.
template <class Dot>
struct Lanes {
  using Codes = neon::Codes;
  struct Acc {
    float32x4_t v[2];
  };

  static Acc zero() { return {{vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}}; }
  static Codes unpack(const uint8_t* block) { return neon::unpack(block); }

  static Acc step(Acc acc, const Codes& codes, const QuantizedActs& a, int64_t token, int64_t b) {
    const int8_t* q = a.token_q(token) + b * kActBlockBytes;
    const int32_t* neg_sums = a.token_ymm_neg_sums(token) + b * kYmmLanes;
    const float* scales = a.token_ymm_scales(token) + b * kYmmLanes;
    for (int h = 0; h < 2; ++h) {
      const int32x4_t hi = Dot::lanes(vdupq_n_s32(0), codes, q, h);
      const int32x4_t lo = Dot::lanes(vld1q_s32(neg_sums + 4 * h), codes, q + kActBlock, h);
      const int32x4_t dot = vaddq_s32(vshlq_n_s32(hi, 8), lo);
      const float32x4_t scale = vmulq_f32(codes.d_w, vld1q_f32(scales + 4 * h));
      acc.v[h] = vfmaq_f32(acc.v[h], vcvtq_f32_s32(dot), scale);
    }
    return acc;
  }

  // ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), the AVX2 kernel's order.
  static float sum(Acc acc) {
    const float32x4_t s = vaddq_f32(acc.v[0], acc.v[1]);
    const float32x2_t t = vadd_f32(vget_low_f32(s), vget_high_f32(s));
    return vget_lane_f32(t, 0) + vget_lane_f32(t, 1);
  }
};

}  // namespace tern::kernels::cpu::neon
