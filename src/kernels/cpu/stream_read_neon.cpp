#include <arm_neon.h>

#include "kernels/cpu/stream_read.h"
#include "kernels/cpu/stream_read_loop.h"

namespace tern::kernels::cpu {

namespace {

struct NeonSum {
  uint64x2_t a = vdupq_n_u64(0), b = vdupq_n_u64(0), c = vdupq_n_u64(0), d = vdupq_n_u64(0);
  void add(const uint8_t* q) {
    const auto* w = reinterpret_cast<const uint64_t*>(q);
    for (int i = 0; i < 16; i += 8) {
      a = vaddq_u64(a, vld1q_u64(w + i));
      b = vaddq_u64(b, vld1q_u64(w + i + 2));
      c = vaddq_u64(c, vld1q_u64(w + i + 4));
      d = vaddq_u64(d, vld1q_u64(w + i + 6));
    }
  }
  uint64_t total() const { return vaddvq_u64(vaddq_u64(vaddq_u64(a, b), vaddq_u64(c, d))); }
};

}  // namespace

uint64_t stream_sum_neon(const uint8_t* p, size_t bytes, StreamPattern pattern) {
  return stream_sum_loop<NeonSum>(p, bytes, pattern);
}

}  // namespace tern::kernels::cpu
