// The AVX2 lane order as a tiling policy (pq2_tile.h), shared by the AVX2 (`vpmaddubsw`) and AVX-VNNI
// (`vpdpbusd` on ymm) PQ2_0 kernels: one block's four code vectors, lane l of eight summing qs bytes
// 4l..4l+3 of every 2-bit field, one convert and one FMA with d_w times the lane steps per block. The Dot
// policy gives the lanes' exact integers (256·Σ code·hi + Σ code·lo − lane sum); integers are exact in
// any order, so every Dot gives the same bits. Included only by the *_avx2.cpp and *_avxvnni.cpp files;
// everything here is a member of the template, so each file's instantiation is compiled for its own ISA
// and no inline function compiled with VNNI can stand in for the AVX2 one at link time.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/lane_sum_x86.h"
#include "kernels/cpu/pq2_tile.h"

namespace tern::kernels::cpu {

template <class Dot>
struct Avx2Lanes {
  struct Codes {
    __m256i c[4];  // (qs >> 2s) & Dot::field_mask()
    __m256 d_w;
  };
  using Acc = __m256;

  static Acc zero() { return _mm256_setzero_ps(); }

  static Codes unpack(const uint8_t* block) {
    const __m256i low2 = Dot::field_mask();
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    uint16_t bits;
    std::memcpy(&bits, block, sizeof bits);
    return Codes{
        {_mm256_and_si256(qs, low2), _mm256_and_si256(_mm256_srli_epi16(qs, 2), low2),
         _mm256_and_si256(_mm256_srli_epi16(qs, 4), low2), _mm256_and_si256(_mm256_srli_epi16(qs, 6), low2)},
        _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(bits)))};
  }

  static Acc step(Acc acc, const Codes& codes, const QuantizedActs& a, int64_t token, int64_t b) {
    const int8_t* q = a.token_q(token) + b * kActBlockBytes;
    const __m256i neg_sums =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(a.token_ymm_neg_sums(token) + b * kYmmLanes));
    const __m256i dot = Dot::lanes(codes.c, reinterpret_cast<const __m256i*>(q), neg_sums);
    const __m256 scale = _mm256_mul_ps(codes.d_w, _mm256_load_ps(a.token_ymm_scales(token) + b * kYmmLanes));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc);
  }

  static float sum(Acc v) { return sum_of_lanes(v); }
};

}  // namespace tern::kernels::cpu
