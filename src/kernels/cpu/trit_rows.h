// Kernels for ternary matrices in trit rows (quant/trit_rows.h), the form model::Model gives PTQ1_0
// matrices with --ptq1-form rows: memory ≈ the file on CPUs without AVX-512 VBMI, where the default
// transcodes PTQ1_0 to PQ2_0 (1.21 × the file). Decode reads 1.6-bit trits, 19% fewer bytes than PQ2_0,
// but takes about four more vector instructions per code vector to expand them (see docs/performance.md).
//
// All of them produce exactly what the PQ2_0 kernels produce on the same trits (pq2_matmul.h), so a PTQ1_0
// file and its PQ2_0 twin give the same bits.
#pragma once

#include <cstdint>

#include "kernels/cpu/pq2_matmul.h"

namespace tern::kernels::cpu {

// The kernel for decode tokens on this CPU: trit_rows_avx2 with AVX2 and FMA where pq2_decode_kernel()
// gives its bits (pq2_decode_in_lane_order()), else the re-pack.
Pq2RowsKernel trit_rows_decode_kernel();

// AVX2 + FMA, any number of tokens: the lane order and bits of pq2_rows_avx2. Per 32-byte source, a
// load and 28 byte operations give five code vectors (1.25 blocks); each block then takes that kernel's
// step.
void trit_rows_avx2(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                    int64_t row_begin, int64_t row_end);

// Prompt tokens, any CPU: the rows are re-packed to PQ2_0 slab by slab (pq2_slabs.h) for
// pq2_prompt_kernel(a.n_tokens); the re-pack is a few instructions a block against a chunk of tokens'
// products.
void trit_rows_prompt(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end);
// Decode tokens the same way, with pq2_decode_kernel(): the decode kernel where AVX2 is missing.
void trit_rows_repacked(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                        int64_t row_begin, int64_t row_end);

// Rows [row_begin, row_end) of `w` as PQ2_0 rows of w.cols / 128 blocks each, at out + i · 34 · blocks:
// with AVX2 where the CPU has it (the _avx2 variant), else the scalar codec.
void trit_rows_to_pq2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);
void trit_rows_to_pq2_avx2(const TernaryMatrix& w, int64_t row_begin, int64_t row_end, uint8_t* out);

}  // namespace tern::kernels::cpu
