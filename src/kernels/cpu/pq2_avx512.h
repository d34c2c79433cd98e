// The AVX-512 VNNI PQ2_0 steps the AVX-512 kernels share (the lane order and the group order,
// pq2_matmul.h, and the trit planes' lane order, trit_planes.h); included only by files compiled for
// AVX-512 VNNI (*_avx512.cpp, *_vbmi.cpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/act_quant.h"

namespace tern::kernels::cpu::avx512 {

// A 128-weight block's codes: the 32 qs bytes broadcast to both halves of a zmm and shifted per half.
struct Codes {
  __m512i c01, c23;  // [c0|c1], [c2|c3]: codes of values 0..63 and 64..127 in act_quant.h's order
};

inline Codes unpack(const uint8_t* block) {
  const __m512i low2 = _mm512_set1_epi8(3);
  const __m512i qs = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2)));
  return Codes{_mm512_and_si512(_mm512_srlv_epi64(qs, _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0)), low2),
               _mm512_and_si512(_mm512_srlv_epi64(qs, _mm512_set_epi64(6, 6, 6, 6, 4, 4, 4, 4)), low2)};
}

// Σ (code − 1)·(256·hi + lo) per zmm lane (act_quant.h), exact, as one chain: start from −Σ hi, add the
// hi products (u8 code × s8 digit summed into int32 by dpbusd), shift by 8, add the lo products,
// subtract Σ lo.
inline __m512i lane_dots(const Codes& codes, const int8_t* q_block, const int32_t* sums) {
  const __m512i* q = reinterpret_cast<const __m512i*>(q_block);
  const __m512i* s = reinterpret_cast<const __m512i*>(sums);
  __m512i dot = _mm512_dpbusd_epi32(_mm512_load_si512(s), codes.c01, _mm512_load_si512(q));
  dot = _mm512_slli_epi32(_mm512_dpbusd_epi32(dot, codes.c23, _mm512_load_si512(q + 1)), 8);
  dot = _mm512_dpbusd_epi32(dot, codes.c01, _mm512_load_si512(q + 2));
  dot = _mm512_dpbusd_epi32(dot, codes.c23, _mm512_load_si512(q + 3));
  return _mm512_sub_epi32(dot, _mm512_load_si512(s + 1));
}

// A block's fp16 scale in every lane.
inline __m512 broadcast_scale(uint16_t d_bits) {
  return _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(d_bits)));
}

// One token's activations as the lane order reads them, block by block.
struct LaneActs {
  const int8_t* q;
  const int32_t* sums;
  const float* scales;

  LaneActs(const QuantizedActs& a, int64_t token)
      : q(a.token_q(token)), sums(a.token_zmm_sums(token)), scales(a.token_zmm_scales(token)) {}
  LaneActs(const int8_t* q_, const int32_t* sums_, const float* scales_)
      : q(q_), sums(sums_), scales(scales_) {}
  // The same token from block `first` on.
  LaneActs from(int64_t first) const {
    return {q + first * kActBlockBytes, sums + first * kZmmSums, scales + first * kZmmLanes};
  }
};

// The lane order's step for block b of one token: acc + lane dot · d_w · lane step.
inline __m512 lane_step(__m512 acc, const Codes& codes, __m512 d_w, const LaneActs& a, int64_t b) {
  const __m512i dot = lane_dots(codes, a.q + b * kActBlockBytes, a.sums + b * kZmmSums);
  const __m512 scale = _mm512_mul_ps(d_w, _mm512_load_ps(a.scales + b * kZmmLanes));
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, acc);
}

}  // namespace tern::kernels::cpu::avx512
