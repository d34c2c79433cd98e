#include "kernels/ops.h"

#include "kernels/ref/activation.h"
#include "kernels/ref/argmax.h"
#include "kernels/ref/conv.h"
#include "kernels/ref/embedding.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/matmul.h"
#include "kernels/ref/rms_norm.h"
#include "kernels/ref/rope.h"
#include "kernels/ref/site_transform.h"

namespace tern::kernels {

const Ops& reference_ops() {
  static constexpr Ops kOps{
      .name = "ref",
      .embedding = ref::embedding,
      .matmul = [](float* y, const MatrixView& w, const float* x,
                   TokenRows rows) { ref::matmul(y, w, x, rows.count); },
      .matmul_argmax =
          [](float* y, int32_t* best, const MatrixView& w, const float* x, TokenRows rows) {
            ref::matmul(y, w, x, rows.count);
            ref::argmax_rows(best, y, rows.count, w.rows);
          },
      .matmul_shared = [](std::span<const MatmulTarget> targets, const float* x,
                          TokenRows rows) { ref::matmul_shared(targets, x, rows.count); },
      .site_forward = ref::site_forward,
      .site_inverse = ref::site_inverse,
      .silu = ref::silu_values,
      .sigmoid_gate = ref::sigmoid_gate,
      .swiglu_site =
          [](float* gate, const float* up, int64_t n_tokens, int64_t width, std::span<const float> signs,
             int64_t block) {
            ref::swiglu(gate, up, n_tokens * width);
            if (block > 0) ref::site_forward(gate, n_tokens, width, signs, block);
          },
      .rms_norm = ref::rms_norm,
      .gated_rms_norm = ref::gated_rms_norm,
      .l2_norm = ref::l2_norm,
      .rope = ref::rope_rotate,
      .attention = ref::attention,
      .causal_conv = ref::causal_conv,
      .gdn_recurrent = ref::gdn_recurrent,
      .gdn_chunked_scratch_size = ref::gdn_chunked_scratch_size,
      .gdn_chunked = ref::gdn_chunked,
  };
  return kOps;
}

}  // namespace tern::kernels
