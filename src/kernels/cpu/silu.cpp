#include "kernels/cpu/silu.h"

#include "core/cpu_features.h"
#include "kernels/ref/activation.h"

namespace tern::kernels::cpu {

void silu_scalar(float* out, const float* x, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = up == nullptr ? ref::silu(x[i]) : ref::silu(x[i]) * up[i];
}

void sigmoid_gate_scalar(float* x, const float* gate, int64_t n) {
  ref::sigmoid_gate(x, gate, n);
}

SiluKernel silu_kernel() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx512_vnni()) return silu_avx512;
  if (cpu.has_avx2_fma()) return silu_avx2;
#endif
  return silu_scalar;
}

SigmoidGateKernel sigmoid_gate_kernel() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx512_vnni()) return sigmoid_gate_avx512;
  if (cpu.has_avx2_fma()) return sigmoid_gate_avx2;
#endif
  return sigmoid_gate_scalar;
}

}  // namespace tern::kernels::cpu
