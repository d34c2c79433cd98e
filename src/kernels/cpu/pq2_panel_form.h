// Kernels for ternary matrices in PQ2_0 panels (quant/pq2_panels.h), the form model::Model gives PQ2_0
// matrices where this CPU has AVX-512 VBMI (cpu_features().has_avx512_vbmi()). A 64-byte load holds one
// qs dword of sixteen rows, so each row owns an int32 lane of a zmm from the dot products to the sums:
// no pairing or gathering of rows and no lane reduction per row, and a thread's rows are one sequential
// stream.
//
// Each kernel gives exactly the bits of the PQ2_0 row kernel of its role on this CPU (pq2_matmul.h): on a
// VBMI CPU the group order of pq2_rows_avx512_groups, for decode and prompt tokens alike. So a model
// decodes the same tokens in either form, and PQ2_0 and PTQ1_0 files still agree bit for bit.
#pragma once

#include <cstdint>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

// The kernels for decode tokens and for n_tokens prompt tokens on this CPU (after the TERN_ISA cap).
// Where the fast kernels below cannot run, the rows are re-packed to PQ2_0 slab by slab (pq2_slabs.h)
// for pq2_decode_kernel() / pq2_prompt_kernel(): exact everywhere, fast only with VBMI. With AMX the
// prompt reads the panels in the AMX kernels below, the chunk one from kPanelFormAmxMinTokens tokens on.
Pq2RowsKernel pq2_panel_form_decode_kernel();
Pq2RowsKernel pq2_panel_form_prompt_kernel(int64_t n_tokens);

// From this many tokens pq2_panel_form_rows_amx beats pq2_panel_form_rows_amx_few, which takes up to
// eight tokens a tile (BM_Pq2PanelFormPromptHot, in L2, 12-05: 12 tokens 39 against 65 µs, 16 57 against
// 62, 24 65 against 102, 32 equal at 82). Later than the rows' kAmxMinTokens: no transposes here.
inline constexpr int64_t kPanelFormAmxMinTokens = 32;

// Decode tokens, AVX-512 VBMI + VNNI: the block order (panel_blocks_avx512.h), the group order's bits
// (pq2_rows_avx512_groups'). Per panel, block and token: eight code vectors, each split into its four
// 2-bit fields and dotted with the broadcast hi and lo digits (eight VPDPBUSD) into the block's integer
// chains, then once a block the digits joined, the convert, the step and the FMA with d_w: ≈ 12.6 vector
// instructions a code vector (256 weights) against the lane order's 15.5, whose per-lane scaling needed
// group steps. Activations with group steps go to pq2_panel_form_rows_groups. The two differ only in how
// they take the fields (panel_blocks_avx512.h's FieldOps): shifts and masks (AMD's cores) or
// GF2P8AFFINEQB (Intel's).
void pq2_panel_form_rows_blocks_shifts(float* y, int64_t y_stride, const TernaryMatrix& w,
                                       const QuantizedActs& a, int64_t row_begin, int64_t row_end);
void pq2_panel_form_rows_blocks_affine(float* y, int64_t y_stride, const TernaryMatrix& w,
                                       const QuantizedActs& a, int64_t row_begin, int64_t row_end);

// AVX-512 VNNI, the group order (pq2_rows_avx512_groups' bits): the walk of pq2_rows_avx512_panels, each
// panel's codes expanded from its stored vectors (shifts and masks) instead of gathered from rows.
void pq2_panel_form_rows_groups(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                                int64_t row_begin, int64_t row_end);

// AMX-INT8, the group order (pq2_rows_amx's bits): its walk, each panel's B tiles unpacked from the
// stored vectors instead of gathered from rows (no re-pack to PQ2_0 first); activations with group steps
// go to pq2_panel_form_rows_groups.
void pq2_panel_form_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end);

// AMX-INT8, the few-token kernel (pq2_rows_amx_few's bits) on the stored panels, whose vectors are the
// B rows' sources as they are (no transposes); activations with group steps go to
// pq2_panel_form_rows_groups.
void pq2_panel_form_rows_amx_few(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                                 int64_t row_begin, int64_t row_end);

// Any CPU: the slab re-pack to pq2_decode_kernel() / pq2_prompt_kernel(a.n_tokens).
void pq2_panel_form_rows_repacked_decode(float* y, int64_t y_stride, const TernaryMatrix& w,
                                         const QuantizedActs& a, int64_t row_begin, int64_t row_end);
void pq2_panel_form_rows_repacked_prompt(float* y, int64_t y_stride, const TernaryMatrix& w,
                                         const QuantizedActs& a, int64_t row_begin, int64_t row_end);

// The panel-walking kernels' prologue: the matmul splits rows by whole panels, so only a range that starts
// inside one has rows before its first whole panel; those take the re-pack to `row_kernel` (the same
// bits). Returns the row the whole panels start from, row_end when nothing is left to walk.
int64_t rows_before_whole_panels(Pq2RowsKernel row_kernel, float* y, int64_t y_stride, const TernaryMatrix& w,
                                 const QuantizedActs& a, int64_t row_begin, int64_t row_end);

// Rows [row_begin, row_end) of a panel-form matrix as PQ2_0 rows (a ToPq2Rows, pq2_slabs.h).
void pq2_panels_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);

}  // namespace tern::kernels::cpu
