// The block order's step on 16-row panels (PQ2_0 panels, trit panels), the decode kernels of AVX-512 VBMI
// CPUs: each row an int32 lane of a zmm, and under block steps (act_quant.h, how such a CPU quantises decode
// tokens) a block's digit products are summed in integers over all its code vectors and scaled once,
//   acc = fma((256·Hi + Lo)·s, d_w, acc),
// the group order's value under block steps (pq2_matmul.h): the bits of the prompt kernels, AMX's among
// them. Included only by files compiled for AVX-512 VNNI; FieldOps::kAffine needs GFNI too (*_vbmi.cpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/act_quant.h"

namespace tern::kernels::cpu::avx512 {

// acc + VPDPBUSD(code, the four digit bytes at p in every lane), the broadcast folded into the
// instruction as {1to16}: GCC 12 will not fold a set1 into the builtin, and the separate VPBROADCASTD per
// product cost the kernel 1.15-1.2x in L2 (Zen 4, 12-01).
inline __m512i dpbusd_bcast(__m512i acc, __m512i code, const int8_t* p) {
  asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(code), "m"(*reinterpret_cast<const int32_t*>(p)));
  return acc;
}

// Two instruction choices for the same fields, picked by vendor (pq2_panel_form.cpp). kShifts takes a
// code vector's fields by shifts and masks: Zen 4 issues those beside the two pipes its VPDPBUSD needs,
// where GF2P8AFFINEQB would compete (fields by affine ran 1.35x slower in L2 there, 12-01). kAffine takes
// fields 1-3 by one GF2P8AFFINEQB each: Emerald Rapids runs 512-bit shifts on port 0 alone, and there the
// PQ2_0 panel block kernel runs in 0.83 of kShifts' time in L2 (BM_Pq2PanelFormKernelHot/1, session 38).
enum class FieldOps { kShifts, kAffine };

// Field s of every byte of qs (its bits 2s, 2s + 1) in the byte's low two bits, the rest zero.
template <FieldOps Ops>
inline void panel_fields(__m512i qs, __m512i (&code)[4]) {
  const __m512i low2 = _mm512_set1_epi8(3);
  code[0] = _mm512_and_si512(qs, low2);
  for (int s = 1; s < 4; ++s) {
    if constexpr (Ops == FieldOps::kAffine) {
      // Output bit i of a byte is the parity of (matrix byte 7 - i) & input: bits 2s and 2s + 1 to 0, 1.
      const uint64_t take = uint64_t{1} << (2 * s) << 56 | uint64_t{2} << (2 * s) << 48;
      code[s] = _mm512_gf2p8affine_epi64_epi8(qs, _mm512_set1_epi64(static_cast<long long>(take)), 0);
    } else {
      code[s] = _mm512_and_si512(_mm512_srli_epi32(qs, 2 * s), low2);
    }
  }
}

// The block's −Σ (256·hi + lo) from its eight ymm lane sums (act_quant.h), where the lo chain starts.
inline int32_t block_neg_sum(const int32_t* ymm_neg_sums) {
  int32_t sum = 0;
  for (int l = 0; l < kYmmLanes; ++l) sum += ymm_neg_sums[l];
  return sum;
}

// One block and token's digit sums in four chains a digit, one per field: a VPDPBUSD waits about five
// cycles for its accumulator, and a block gives each chain eight. All integer sums are exact in any order
// (|256·Σ code·hi| < 2^24).
struct BlockChains {
  __m512i hi[4], lo[4];

  void start(int32_t neg_sum) {
    for (int s = 0; s < 4; ++s) hi[s] = lo[s] = _mm512_setzero_si512();
    lo[0] = _mm512_set1_epi32(neg_sum);
  }

  // The products of one code vector's four fields with the digits they meet: field s of qs byte j meets
  // digit byte 32·s + j of each plane, and the vector's lane bytes start at byte `at` of the hi plane.
  void add(const __m512i (&code)[4], const int8_t* at) {
    for (int s = 0; s < 4; ++s) {
      hi[s] = dpbusd_bcast(hi[s], code[s], at + 32 * s);
      lo[s] = dpbusd_bcast(lo[s], code[s], at + kActBlock + 32 * s);
    }
  }

  __m512i dot() const;
};

// 256·hi + lo: a block's exact dot from its two digit sums.
inline __m512i joined_digits(__m512i hi, __m512i lo) {
  return _mm512_add_epi32(_mm512_slli_epi32(hi, 8), lo);
}

inline __m512i BlockChains::dot() const {
  const __m512i h = _mm512_add_epi32(_mm512_add_epi32(hi[0], hi[1]), _mm512_add_epi32(hi[2], hi[3]));
  const __m512i l = _mm512_add_epi32(_mm512_add_epi32(lo[0], lo[1]), _mm512_add_epi32(lo[2], lo[3]));
  return joined_digits(h, l);
}

// acc + block × token in the group order's rounding under block steps: fma(dot · step, d_w, acc), the
// product by the power-of-two step exact.
inline __m512 block_scaled(__m512 acc, __m512i dot, float step, __m512 d_w) {
  return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot), _mm512_set1_ps(step)), d_w, acc);
}

}  // namespace tern::kernels::cpu::avx512
