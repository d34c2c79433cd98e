// The inner loops of measure_int8_dot_gmacs (bandwidth.h), each in its own ISA's translation unit.
#pragma once

#include <cstdint>

namespace tern::kernels::cpu {

// Multiply-accumulates performed by one iteration of int8_dot_chains_avx2: 10 maddubs x 32 bytes.
inline constexpr int64_t kDotChainMacs = 10 * 32;

// Runs `iterations` rounds of ten independent maddubs + add_epi16 chains on register data and
// returns a value derived from the result (so the work cannot be dropped). Needs AVX2.
int64_t int8_dot_chains_avx2(int64_t iterations);

// Multiply-accumulates performed by one iteration of int8_dot_chains_avx512: 12 dpbusd x 64 bytes.
inline constexpr int64_t kDotChainMacsAvx512 = 12 * 64;

// The same with AVX-512 VNNI dpbusd (u8 x s8 summed straight into int32). Needs AVX-512 VNNI.
int64_t int8_dot_chains_avx512(int64_t iterations);

// Multiply-accumulates performed by one iteration of int8_dot_chains_avxvnni: 10 dpbusd x 32 bytes.
inline constexpr int64_t kDotChainMacsAvxVnni = 10 * 32;

// Ten chains of the ymm dpbusd. Needs cpu_features().has_avx_vnni().
int64_t int8_dot_chains_avxvnni(int64_t iterations);

// Multiply-accumulates performed by one iteration of int8_dot_tiles_amx: 4 TDPBSSD of 16 x 16 x K.
inline constexpr int64_t amx_tile_round_macs(int k_bytes) {
  return 4 * 16 * 16 * int64_t{k_bytes};
}

// Runs `iterations` rounds of four independent AMX TDPBSSD (s8 x s8 into int32 tiles, 16 x 16 outputs,
// K = k_bytes: 32 or 64) and returns a value derived from the result. Needs has_amx_int8().
int64_t int8_dot_tiles_amx(int64_t iterations, int k_bytes);

// Multiply-accumulates performed by one iteration of int8_dot_chains_neon: 8 smlal x 8 bytes.
inline constexpr int64_t kDotChainMacsNeon = 8 * 8;

// Eight chains of NEON smlal (s8 x s8 widened into int16 and accumulated). AArch64.
int64_t int8_dot_chains_neon(int64_t iterations);

// Multiply-accumulates performed by one iteration of int8_dot_chains_dotprod: 8 sdot x 16 bytes.
inline constexpr int64_t kDotChainMacsDotprod = 8 * 16;

// Eight chains of SDOT (s8 x s8 summed by fours into int32). Needs cpu_features().dotprod.
int64_t int8_dot_chains_dotprod(int64_t iterations);

}  // namespace tern::kernels::cpu
