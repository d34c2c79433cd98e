// Kernels for ternary matrices in trit planes (quant/trit_planes.h), a PTQ1_0 form (--ptq1-form planes):
// the rows are re-packed to PQ2_0 slab by slab (by VBMI's lookups where the CPU has them) and take the
// PQ2_0 kernels: exact, not fast.
//
// They produce exactly what the PQ2_0 kernels produce on the same trits (pq2_matmul.h), so a PTQ1_0
// file and its PQ2_0 twin give the same bits.
#pragma once

#include <cstdint>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

// The kernel for decode tokens on this CPU: the re-pack (trit_planes_rows_repacked).
Pq2RowsKernel trit_planes_decode_kernel();

// Prompt tokens, any CPU: the rows are re-packed to PQ2_0 in per-thread scratch (a slab of up to 1024
// rows at a time, grown on first use only) and handed to pq2_prompt_kernel(a.n_tokens). Prefill is
// compute-bound, and the re-pack is a few instructions a block against a chunk of tokens' products.
void trit_planes_rows_prompt(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end);
// Decode tokens the same way, with pq2_decode_kernel(). (With VBMI a pairs kernel once read the planes
// directly in the lane order; the block order of VBMI's decode has no kernel of its own for this form,
// which trit panels replaced as VBMI's PTQ1_0 form.)
void trit_planes_rows_repacked(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                               int64_t row_begin, int64_t row_end);

// Rows [row_begin, row_end) of `w` as PQ2_0 rows of w.cols / 128 blocks each, at out + i · 34 · blocks:
// with VBMI's lookups where the CPU has them (the _vbmi variant), else the scalar codec.
void trit_planes_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);
void trit_planes_to_pq2_vbmi(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);

}  // namespace tern::kernels::cpu
