// Kernels for ternary matrices in trit panels (quant/trit_panels.h), the form model::Model gives PTQ1_0
// matrices where this CPU has AVX-512 VBMI: the PQ2_0 panel kernels' steps (pq2_panel_form.h) on codes
// read at 1.6 bits a weight, so decode reads 19% fewer bytes than PQ2_0 panels with the same
// arithmetic, and a PTQ1_0 file still gives its PQ2_0 twin's bits. On any other CPU (the form forced with
// --ptq1-form panels) the rows are re-packed to PQ2_0 slab by slab: exact, not fast.
#pragma once

#include <cstdint>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

// The kernels for decode tokens and for n_tokens prompt tokens on this CPU.
Pq2RowsKernel trit_panels_decode_kernel();
Pq2RowsKernel trit_panels_prompt_kernel(int64_t n_tokens);

// Decode tokens, AVX-512 VBMI + VNNI: pq2_panel_form_rows_blocks_*' block order and bits (the group
// order's). Per panel, unit of five blocks and qs dword: four sources expand by eight instructions each into
// the dword's four fields for the five blocks, whose products go into each block's integer chains; once a
// block the digits are joined, converted and scaled. Activations with group steps go to
// trit_panels_rows_prompt_vbmi.
void trit_panels_rows_blocks(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end);

// Prompt tokens, AVX-512 VBMI + VNNI: the panels covering the rows are expanded to PQ2_0 panels (a
// slab at a time, in per-thread scratch) for pq2_panel_form_prompt_kernel(a.n_tokens). Prefill is
// compute-bound, and the expansion is a few instructions a block against a chunk of tokens' products.
void trit_panels_rows_prompt_vbmi(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                                  int64_t row_begin, int64_t row_end);

// Any CPU: the scalar re-pack to PQ2_0 rows for pq2_decode_kernel() / pq2_prompt_kernel(a.n_tokens).
void trit_panels_rows_repacked_decode(float* y, int64_t y_stride, const TernaryMatrix& w,
                                      const QuantizedActs& a, int64_t row_begin, int64_t row_end);
void trit_panels_rows_repacked_prompt(float* y, int64_t y_stride, const TernaryMatrix& w,
                                      const QuantizedActs& a, int64_t row_begin, int64_t row_end);

// Rows [row_begin, row_end) of `w` as PQ2_0 rows (pq2_slabs.h's ToPq2Rows), by the scalar codec.
void trit_panels_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);

}  // namespace tern::kernels::cpu
