// The inner loop of measure_int8_dot_gmacs (bandwidth.h), in its own AVX2 translation unit.
#pragma once

#include <cstdint>

namespace tern::kernels::cpu {

// Multiply-accumulates performed by one iteration of int8_dot_chains_avx2: 8 maddubs x 32 bytes.
inline constexpr int64_t kDotChainMacs = 8 * 32;

// Runs `iterations` rounds of eight independent maddubs + add_epi16 chains on register data and
// returns a value derived from the result (so the work cannot be dropped). Needs AVX2.
int64_t int8_dot_chains_avx2(int64_t iterations);

}  // namespace tern::kernels::cpu
