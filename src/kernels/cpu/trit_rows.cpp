#include "kernels/cpu/trit_rows.h"

#include "core/cpu_features.h"
#include "kernels/cpu/pq2_slabs.h"

namespace tern::kernels::cpu {

// The AVX2 kernel gives pq2_rows_avx2's bits: where the PQ2_0 decode kernel rounds otherwise, the re-pack
// keeps a PTQ1_0 file's logits those of its PQ2_0 twin.
Pq2RowsKernel trit_rows_decode_kernel() {
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma() && pq2_decode_in_lane_order()) return trit_rows_avx2;
#endif
  return trit_rows_repacked;
}

void trit_rows_prompt(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end) {
  rows_via_pq2(trit_rows_to_pq2, pq2_prompt_kernel(a.n_tokens), y, y_stride, w, a, row_begin, row_end);
}

void trit_rows_repacked(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                        int64_t row_begin, int64_t row_end) {
  rows_via_pq2(trit_rows_to_pq2, pq2_decode_kernel(), y, y_stride, w, a, row_begin, row_end);
}

void trit_rows_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) {
    trit_rows_to_pq2_avx2(w, row_begin, row_end, out);
    return;
  }
#endif
  transcode_to_pq2(w, row_begin, row_end, out);
}

}  // namespace tern::kernels::cpu
