// The table lookups that expand trit-plane bytes (quant/trit_planes.h) into 2-bit code vectors, shared by
// the kernels of trit planes and trit panels. AVX-512 VBMI: include from *_vbmi.cpp files only.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstdint>

#include "quant/trit_planes.h"

namespace tern::kernels::cpu {

// The lookups of quant/trit_planes.h: slots 0 and 1 from the low six bits, 2w from the low seven
// (a 128-entry table, two registers), slots 2..4 from u = 2w + H.
struct TritTables {
  __m512i slot0, slot1, twice_w[2], slot2, slot3, slot4;
};

inline TritTables make_tables() {
  alignas(64) uint8_t by_low6[2][64] = {};
  alignas(64) uint8_t twice_w[128] = {};
  alignas(64) uint8_t by_u[3][64] = {};
  for (int low7 = 0; low7 < 128; ++low7) {
    if ((low7 & 63) == 63) continue;  // never stored
    const std::array<uint8_t, 5> slots = quant::trit_plane_slots(static_cast<uint8_t>(low7));
    by_low6[0][low7 & 63] = slots[0];
    by_low6[1][low7 & 63] = slots[1];
    twice_w[low7] = static_cast<uint8_t>(9 * slots[2] + 3 * slots[3] + slots[4]);  // u with H = 0
  }
  for (int u = 0; u < 27; ++u) {
    const std::array<uint8_t, 5> slots = quant::trit_plane_slots(quant::trit_plane_byte(
        {0, 0, static_cast<uint8_t>(u / 9), static_cast<uint8_t>(u / 3 % 3), static_cast<uint8_t>(u % 3)}));
    for (int s = 0; s < 3; ++s) by_u[s][u] = slots[2 + s];
  }
  const auto load = [](const uint8_t* p) { return _mm512_load_si512(p); };
  return TritTables{load(by_low6[0]), load(by_low6[1]), {load(twice_w), load(twice_w + 64)},
                    load(by_u[0]),    load(by_u[1]),    load(by_u[2])};
}

// The five code vectors held by 64 source bytes (a source, or the halves of two, below).
inline void extract_bytes(__m512i bytes, const TritTables& t, __m512i* vectors) {
  vectors[0] = _mm512_permutexvar_epi8(bytes, t.slot0);
  vectors[1] = _mm512_permutexvar_epi8(bytes, t.slot1);
  const __m512i twice_w = _mm512_permutex2var_epi8(t.twice_w[0], bytes, t.twice_w[1]);
  const __m512i u = _mm512_mask_add_epi8(twice_w, _mm512_movepi8_mask(bytes), twice_w, _mm512_set1_epi8(1));
  vectors[2] = _mm512_permutexvar_epi8(u, t.slot2);
  vectors[3] = _mm512_permutexvar_epi8(u, t.slot3);
  vectors[4] = _mm512_permutexvar_epi8(u, t.slot4);
}

inline const TritTables& plane_tables() {
  static const TritTables tables = make_tables();
  return tables;
}

}  // namespace tern::kernels::cpu
