// What the running CPU can execute, read once at start; kernels dispatch on it.
#pragma once

#include <cstdint>
#include <string>

namespace tern {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512vnni = false;
  bool avxvnni = false;
  bool avx512vbmi = false;
  bool gfni = false;
  bool amx_int8 = false;  // AMX-TILE + AMX-INT8, enabled by the OS and granted to this process
  bool neon = false;      // AArch64 Advanced SIMD (every AArch64 CPU)
  bool dotprod = false;   // ARMv8.2 SDOT/UDOT (FEAT_DotProd)
  // The vendor, where kernels that give the same bits differ only in which execution ports they load
  // (pq2_panel_form.cpp, trit_panels.cpp). Not an ISA: TERN_ISA leaves it as detected, except scalar.
  bool intel = false;
  // AMD Zen and Zen+ (family 17h below model 30h) and Hygon Dhyana (family 18h): each 256-bit instruction
  // runs as two 128-bit halves, and one 128-bit pipe multiplies, so a kernel's multiplies bound it
  // (pq2_rows_avx2_words). Not an ISA either: TERN_ISA leaves it as detected, except scalar.
  bool split_256 = false;

  bool has_avx2_fma() const { return avx2 && fma && f16c; }
  bool has_avx512_vnni() const { return avx512f && avx512bw && avx512vl && avx512vnni; }
  // VNNI on ymm with a VEX encoding (Alder Lake and later client cores, Zen 5): the *_avxvnni.cpp kernels.
  bool has_avx_vnni() const { return avxvnni && has_avx2_fma(); }
  // AVX-512 VBMI's byte permutes with VNNI and GFNI's bit matrices (every VBMI CPU but Cannon Lake has
  // GFNI): the *_vbmi.cpp kernels, the PQ2_0 pairs and the trit planes ones.
  bool has_avx512_vbmi() const { return avx512vbmi && gfni && has_avx512_vnni(); }
  // The AMX kernels also use AVX-512 VBMI and GFNI to lay out their tiles (every AMX CPU has both).
  bool has_amx_int8() const { return amx_int8 && gfni && avx512vbmi && has_avx512_vnni(); }
  std::string describe() const;
};

// Detected once (thread-safe static); TERN_ISA=scalar|avx2|avxvnni|avx512|neon caps what is reported, so
// every path can be exercised on one machine (avx2 is AVX2 without any VNNI, avxvnni adds the ymm one,
// avx512 turns AMX off, neon the dot-product extension; amx or native leaves all on). On Linux the
// first call also asks the kernel for the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM); AMX counts as
// present only when that is granted.
const CpuFeatures& cpu_features();

// One core's L2 cache in bytes, as the OS reports it (read once); 0 where it does not.
int64_t l2_cache_bytes();

// The last-level cache in bytes (L3, else L2), as the OS reports it (read once); 0 where it does not.
int64_t last_level_cache_bytes();

}  // namespace tern
