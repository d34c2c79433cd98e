#include "kernels/cpu/trit_planes.h"

#include <algorithm>

#include "core/cpu_features.h"
#include "kernels/cpu/pq2_slabs.h"

namespace tern::kernels::cpu {

Pq2RowsKernel trit_planes_decode_kernel() {
  return trit_planes_rows_repacked;
}

void trit_planes_rows_prompt(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end) {
  rows_via_pq2(trit_planes_to_pq2, pq2_prompt_kernel(a.n_tokens), y, y_stride, w, a, row_begin, row_end);
}

void trit_planes_rows_repacked(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                               int64_t row_begin, int64_t row_end) {
  rows_via_pq2(trit_planes_to_pq2, pq2_decode_kernel(), y, y_stride, w, a, row_begin, row_end);
}

void trit_planes_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) {
    trit_planes_to_pq2_vbmi(w, row_begin, row_end, out);
    return;
  }
#endif
  transcode_to_pq2(w, row_begin, row_end, out);
}

}  // namespace tern::kernels::cpu
