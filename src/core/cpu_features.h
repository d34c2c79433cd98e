// What the running CPU can execute, read once at start; kernels dispatch on it.
#pragma once

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
  bool neon = false;

  bool has_avx2_fma() const { return avx2 && fma && f16c; }
  bool has_avx512_vnni() const { return avx512f && avx512bw && avx512vl && avx512vnni; }
  std::string describe() const;
};

// Detected once (thread-safe static); TERN_ISA=scalar|avx2|avx512 caps what is reported, so every
// path can be exercised on one machine.
const CpuFeatures& cpu_features();

}  // namespace tern
