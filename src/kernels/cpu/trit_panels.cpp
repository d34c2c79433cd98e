#include "kernels/cpu/trit_panels.h"

#include "core/cpu_features.h"
#include "kernels/cpu/pq2_slabs.h"
#include "quant/trit_panels.h"

namespace tern::kernels::cpu {

Pq2RowsKernel trit_panels_decode_kernel() {
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) return trit_panels_rows_blocks;
#endif
  return trit_panels_rows_repacked_decode;
}

Pq2RowsKernel trit_panels_prompt_kernel(int64_t n_tokens) {
  (void)n_tokens;
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi()) return trit_panels_rows_prompt_vbmi;
#endif
  return trit_panels_rows_repacked_prompt;
}

void trit_panels_rows_repacked_decode(float* y, int64_t y_stride, const TernaryMatrix& w,
                                      const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  rows_via_pq2(trit_panels_to_pq2, pq2_decode_kernel(), y, y_stride, w, a, row_begin, row_end);
}

void trit_panels_rows_repacked_prompt(float* y, int64_t y_stride, const TernaryMatrix& w,
                                      const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  rows_via_pq2(trit_panels_to_pq2, pq2_prompt_kernel(a.n_tokens), y, y_stride, w, a, row_begin, row_end);
}

void trit_panels_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
  quant::trit_panels_to_rows(w.data, w.cols, row_begin, row_end, out);
}

}  // namespace tern::kernels::cpu
