// The inner loops of measure_int8_dot_gmacs (bandwidth.h), each in its own ISA's translation unit.
#pragma once

#include <cstdint>

namespace tern::kernels::cpu {

// Multiply-accumulates performed by one iteration of int8_dot_chains_avx2: 8 maddubs x 32 bytes.
inline constexpr int64_t kDotChainMacs = 8 * 32;

// Runs `iterations` rounds of eight independent maddubs + add_epi16 chains on register data and
// returns a value derived from the result (so the work cannot be dropped). Needs AVX2.
int64_t int8_dot_chains_avx2(int64_t iterations);

// Multiply-accumulates performed by one iteration of int8_dot_chains_avx512: 8 dpbusd x 64 bytes.
inline constexpr int64_t kDotChainMacsAvx512 = 8 * 64;

// The same with AVX-512 VNNI dpbusd (u8 x s8 summed straight into int32). Needs AVX-512 VNNI.
int64_t int8_dot_chains_avx512(int64_t iterations);

}  // namespace tern::kernels::cpu
