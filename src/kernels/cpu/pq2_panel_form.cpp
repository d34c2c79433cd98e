#include "kernels/cpu/pq2_panel_form.h"

#include <algorithm>

#include "core/cpu_features.h"
#include "kernels/cpu/pq2_slabs.h"
#include "quant/pq2_panels.h"

namespace tern::kernels::cpu {

Pq2RowsKernel pq2_panel_form_decode_kernel() {
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vbmi())
    return cpu_features().intel ? pq2_panel_form_rows_blocks_affine : pq2_panel_form_rows_blocks_shifts;
#endif
  return pq2_panel_form_rows_repacked_decode;
}

Pq2RowsKernel pq2_panel_form_prompt_kernel(int64_t n_tokens) {
#if defined(__x86_64__)
  if (cpu_features().has_amx_int8()) {
    return n_tokens >= kPanelFormAmxMinTokens ? pq2_panel_form_rows_amx : pq2_panel_form_rows_amx_few;
  } else if (cpu_features().has_avx512_vnni()) {
    return pq2_panel_form_rows_groups;
  }
#endif
  (void)n_tokens;
  return pq2_panel_form_rows_repacked_prompt;
}

void pq2_panel_form_rows_repacked_decode(float* y, int64_t y_stride, const TernaryMatrix& w,
                                         const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  rows_via_pq2(pq2_panels_to_pq2, pq2_decode_kernel(), y, y_stride, w, a, row_begin, row_end);
}

void pq2_panel_form_rows_repacked_prompt(float* y, int64_t y_stride, const TernaryMatrix& w,
                                         const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  rows_via_pq2(pq2_panels_to_pq2, pq2_prompt_kernel(a.n_tokens), y, y_stride, w, a, row_begin, row_end);
}

int64_t rows_before_whole_panels(Pq2RowsKernel row_kernel, float* y, int64_t y_stride, const TernaryMatrix& w,
                                 const QuantizedActs& a, int64_t row_begin, int64_t row_end) {
  constexpr int64_t kRows = quant::kPq2PanelRows;
  const int64_t aligned = std::min(row_end, (row_begin + kRows - 1) / kRows * kRows);
  rows_via_pq2(pq2_panels_to_pq2, row_kernel, y, y_stride, w, a, row_begin, aligned);
  return a.n_tokens == 0 ? row_end : aligned;
}

void pq2_panels_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out) {
  quant::pq2_panels_to_rows(w.data, w.cols, row_begin, row_end, out);
}

}  // namespace tern::kernels::cpu
