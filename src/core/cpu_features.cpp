#include "core/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <unistd.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#endif
#if defined(__linux__) && defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace tern {
namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Linux keeps the 8 KiB AMX tile state off until a process asks for it; without this the first tile
// instruction raises SIGILL.
bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return f;
  // "GenuineIntel" in EBX, EDX, ECX.
  f.intel = ebx == 0x756e6547u && edx == 0x49656e69u && ecx == 0x6c65746eu;
  // "AuthenticAMD" and "HygonGenuine".
  const bool amd = ebx == 0x68747541u && edx == 0x69746e65u && ecx == 0x444d4163u;
  const bool hygon = ebx == 0x6f677948u && edx == 0x6e65476eu && ecx == 0x656e6975u;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const unsigned base_family = (eax >> 8) & 0xfu;
  const unsigned family = base_family == 0xfu ? base_family + ((eax >> 20) & 0xffu) : base_family;
  const unsigned model = ((eax >> 4) & 0xfu) | (base_family == 0xfu ? ((eax >> 16) & 0xfu) << 4 : 0u);
  f.split_256 = (amd && family == 0x17u && model < 0x30u) || (hygon && family == 0x18u);
  const bool osxsave = (ecx >> 27) & 1u;
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool ymm_enabled = (xcr0 & 0x6u) == 0x6u;
  const bool zmm_enabled = (xcr0 & 0xe6u) == 0xe6u;
  f.fma = ymm_enabled && ((ecx >> 12) & 1u);
  f.f16c = ymm_enabled && ((ecx >> 29) & 1u);
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    f.avx2 = ymm_enabled && ((ebx >> 5) & 1u);
    f.avx512f = zmm_enabled && ((ebx >> 16) & 1u);
    f.avx512bw = zmm_enabled && ((ebx >> 30) & 1u);
    f.avx512vl = zmm_enabled && ((ebx >> 31) & 1u);
    f.avx512vnni = zmm_enabled && ((ecx >> 11) & 1u);
    f.avx512vbmi = zmm_enabled && ((ecx >> 1) & 1u);
    f.gfni = (ecx >> 8) & 1u;
    const bool tiles_enabled = (xcr0 & 0x60000u) == 0x60000u;  // XTILECFG and XTILEDATA
    f.amx_int8 = tiles_enabled && ((edx >> 24) & 1u) && ((edx >> 25) & 1u) && request_amx_permission();
  }
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avxvnni = ymm_enabled && ((eax >> 4) & 1u);
  return f;
}
#elif defined(__aarch64__)
CpuFeatures detect() {
  CpuFeatures f;
  f.neon = true;
#if defined(__linux__)
  f.dotprod = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
  return f;
}
#else
CpuFeatures detect() {
  return {};
}
#endif

CpuFeatures apply_cap(CpuFeatures f) {
  const char* cap = std::getenv("TERN_ISA");
  if (cap == nullptr || *cap == '\0') return f;
  const std::string_view isa(cap);
  if (isa == "scalar") return CpuFeatures{};
  if (isa == "avx2" || isa == "avxvnni") {
    f.avx512f = f.avx512bw = f.avx512vl = f.avx512vnni = f.avx512vbmi = f.amx_int8 = false;
    if (isa == "avx2") f.avxvnni = false;
    return f;
  }
  if (isa == "avx512") {
    f.amx_int8 = false;
    return f;
  }
  if (isa == "neon") {
    f.dotprod = false;
    return f;
  }
  if (isa == "amx" || isa == "native") return f;
  fail(ErrorKind::kInput, "TERN_ISA='{}': expected scalar, avx2, avxvnni, avx512, amx, neon or native", isa);
}

}  // namespace

std::string CpuFeatures::describe() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512vnni, "avx512vnni");
  add(avxvnni, "avxvnni");
  add(avx512vbmi, "avx512vbmi");
  add(gfni, "gfni");
  add(amx_int8, "amx-int8");
  add(neon, "neon");
  add(dotprod, "dotprod");
  add(split_256, "split-256");
  return out.empty() ? "scalar" : out;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = apply_cap(detect());
  return features;
}

int64_t l2_cache_bytes() {
#if defined(__linux__) && defined(_SC_LEVEL2_CACHE_SIZE)
  static const int64_t bytes = std::max<int64_t>(0, ::sysconf(_SC_LEVEL2_CACHE_SIZE));
  return bytes;
#else
  return 0;
#endif
}

int64_t last_level_cache_bytes() {
#if defined(__linux__) && defined(_SC_LEVEL3_CACHE_SIZE)
  static const int64_t l3 = std::max<int64_t>(0, ::sysconf(_SC_LEVEL3_CACHE_SIZE));
  return l3 > 0 ? l3 : l2_cache_bytes();
#else
  return l2_cache_bytes();
#endif
}

}  // namespace tern
