#include "kernels/cpu/swiglu.h"

#include "core/cpu_features.h"
#include "kernels/ref/activation.h"

namespace tern::kernels::cpu {

void swiglu_scalar(float* gate, const float* up, int64_t n) {
  ref::swiglu(gate, up, n);
}

SwigluKernel swiglu_kernel() {
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx512_vnni()) return swiglu_avx512;
  return cpu.has_avx2_fma() ? swiglu_avx2 : swiglu_scalar;
}

}  // namespace tern::kernels::cpu
