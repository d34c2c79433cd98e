#include "kernels/cpu/norms_cpu.h"

#include "core/cpu_features.h"
#include "kernels/cpu/silu.h"
#include "kernels/ref/conv.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rms_norm.h"

namespace tern::kernels::cpu {

namespace {

#if defined(__x86_64__)
bool vector_isa() {
  static const bool avx2 = cpu_features().has_avx2_fma();
  return avx2;
}
#endif

}  // namespace

void rms_norm(float* out, const float* x, const float* gain, int64_t n, float eps) {
#if defined(__x86_64__)
  if (vector_isa()) {
    return avx2::scale_values(out, x, gain, avx2::inverse_norm(x, n, static_cast<double>(n), eps), n);
  }
#endif
  ref::rms_norm(out, x, gain, n, eps);
}

void gated_rms_norm(float* out, const float* x, const float* gate, const float* gain, int64_t n, float eps) {
#if defined(__x86_64__)
  if (vector_isa()) {
    rms_norm(out, x, gain, n, eps);
    return silu_kernel()(out, gate, out, n);  // out ← silu(gate) · normed, the oracle's product
  }
#endif
  ref::gated_rms_norm(out, x, gate, gain, n, eps);
}

void l2_norm(float* x, int64_t n, float eps) {
#if defined(__x86_64__)
  if (vector_isa()) return avx2::scale_values(x, x, nullptr, avx2::inverse_norm(x, n, 1.0, eps), n);
#endif
  ref::l2_norm(x, n, eps);
}

void causal_conv(float* out, const float* in, float* state, const float* weight, int64_t n_tokens,
                 int64_t channels, int64_t kernel) {
#if defined(__x86_64__)
  if (vector_isa()) return avx2::causal_conv(out, in, state, weight, n_tokens, channels, kernel);
#endif
  ref::causal_conv(out, in, state, weight, n_tokens, channels, kernel);
}

}  // namespace tern::kernels::cpu
