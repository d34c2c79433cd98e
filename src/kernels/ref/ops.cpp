#include "kernels/ops.h"

#include <memory>
#include <new>

#include "kernels/ref/conv.h"
#include "kernels/ref/embedding.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/matmul.h"
#include "kernels/ref/rms_norm.h"
#include "kernels/ref/rope.h"
#include "kernels/ref/site_transform.h"

namespace tern::kernels {

namespace {

// The table's GDN scratch is floats; the oracle's doubles are begun inside that storage, with one
// float of slack so they can be aligned.
size_t gdn_chunked_scratch_floats(const GdnDims& dims, int64_t chunk) {
  return 2 * ref::gdn_chunked_scratch_size(dims, chunk) + 1;
}

void gdn_chunked_in_floats(float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t chunk,
                           std::span<float> scratch) {
  size_t doubles = scratch.size() > 0 ? (scratch.size() - 1) / 2 : 0;
  void* storage = scratch.data();
  size_t space = scratch.size_bytes();
  if (doubles == 0 || std::align(alignof(double), doubles * sizeof(double), storage, space) == nullptr) {
    doubles = 0;  // ref::gdn_chunked reports the shortfall
  }
  double* typed = doubles > 0 ? ::new (storage) double[doubles] : nullptr;
  ref::gdn_chunked(out, state, in, dims, chunk, std::span<double>(typed, doubles));
}

}  // namespace

const Ops& reference_ops() {
  static constexpr Ops kOps{
      .name = "ref",
      .embedding = ref::embedding,
      .matmul = ref::matmul,
      .site_forward = ref::site_forward,
      .site_inverse = ref::site_inverse,
      .rms_norm = ref::rms_norm,
      .gated_rms_norm = ref::gated_rms_norm,
      .l2_norm = ref::l2_norm,
      .rope = ref::rope_neox,
      .attention = ref::attention,
      .causal_conv = ref::causal_conv,
      .gdn_recurrent = ref::gdn_recurrent,
      .gdn_chunked_scratch_size = gdn_chunked_scratch_floats,
      .gdn_chunked = gdn_chunked_in_floats,
  };
  return kOps;
}

}  // namespace tern::kernels
