// Software requests for a kernel's stream ahead of its reads, shared by the panel kernels (*_vbmi.cpp).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace tern::kernels::cpu {

// Requests `lines` 64-byte lines from `from` into L2, none past `end` (the end of the caller's rows):
// the start is clamped once, not each line, since a compare and a move per line run on the ports the
// vector work needs (0.92x the PQ2_0 panel decode kernel's time in L2, Emerald Rapids, session 34).
inline void prefetch_lines(const uint8_t* from, int64_t lines, const uint8_t* end) {
  const uint8_t* start = std::min(from, end - 64 * lines);
  for (int64_t l = 0; l < lines; ++l)
    _mm_prefetch(reinterpret_cast<const char*>(start + 64 * l), _MM_HINT_T1);
}

}  // namespace tern::kernels::cpu
