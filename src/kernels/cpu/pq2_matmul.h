// PQ2_0 ternary matmul against two-digit int8 activations (act_quant.h): y = W · x for one token
// (decode) or a chunk of tokens (prefill), multi-threaded over rows. Per block and lane,
//   dot(w, x) ≈ d_w · step · (Σ code·(256·hi + lo) − Σ (256·hi + lo)),
// which is exact in the integers for every code 0..3 (code 3 decodes as +2·d_w, model-spec §3.2), so no
// scan for code 3 is needed. Each fast path has a scalar twin with the same integer arithmetic.
//
// Two summation orders, and which tokens take which (kernels/ops.h TokenRows):
// - Lane order (scalar, AVX2, NEON, SDOT; pq2_rows_avx512_lanes): each of eight lanes (lane l: qs bytes
//   4l..4l+3 of every 2-bit field) keeps its own fp32 sum, fma(lane dot, d_w · step, sum), over the blocks;
//   the row is ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). The decode order of CPUs without AVX-512
//   VBMI: the scalar, AVX2, AVX-VNNI, NEON and SDOT kernels give the same bits, so those x86 and ARM
//   machines decode alike; the 16-lane AVX-512 kernel, for CPUs without VBMI, rounds its own way.
// - Group order (pq2_rows_avx512_groups, the AVX-512 and AVX-VNNI panel kernels and the AMX kernels):
//   per row, token and block, with D_g the exact integer dot of scale group g (values 32g..32g+31) and
//   s_g its step, in fp32
//     acc = fma((D_0·s_0 + D_1·s_1) + (D_2·s_2 + D_3·s_3), d_w, acc)    (each product rounded)
//   over the blocks in order from acc = 0. All of them round identically, so an AMX, an AVX-512 and an
//   AVX-VNNI server compute the same prompt. Prompt tokens are quantised with block steps (act_quant.h:
//   s_0 = … = s_3 = s, a power of two), under which each product and sum above is exact and the line is
//   acc = fma((D_0 + D_1 + D_2 + D_3)·s, d_w, acc): the AMX kernel sums a block in its tiles.
//   On AVX-512 VBMI CPUs decode tokens take this order too, quantised with block steps
//   (pq2_decode_in_block_order()): summing a block before scaling it is the cheapest exact decode kernel
//   (pq2_panel_form.h), cheaper than the lane order by a sixth of its vector instructions.
// Decode tokens always take the decode kernel and prompt tokens the prompt kernel, whatever else shares
// the matmul; where AVX-512 VNNI or AVX-VNNI exists every prompt token is in group order, whether its
// chunk is one token or 512 (elsewhere, prompt tokens take the decode kernel: with AVX2's `vpmaddubsw`
// the ymm panels were no faster). So a token's outputs are a function of its role and its own values
// only: batched decode and prefix reuse (whose checkpoints hold prompt tokens only) stay bit-exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/dense_matmul.h"
#include "quant/types.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

inline constexpr size_t kPq2BlockBytes = 34;  // {fp16 d; u8 qs[32]}

// A ternary matrix of `rows` rows of cols/128 blocks in one of kPq2KernelForms: rows of PQ2_0, trit planes
// or trit rows (row r at data + r * row_bytes), or panels (whole panels from data; row_bytes a row's).
struct TernaryMatrix {
  const uint8_t* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  quant::TensorType type = quant::TensorType::kPQ2_0;
};

// The forms the matmul's kernels read: PQ2_0 rows, PQ2_0 panels (quant/pq2_panels.h, pq2_panel_form.h),
// trit planes (quant/trit_planes.h, trit_planes.h), trit panels (quant/trit_panels.h, trit_panels.h) and
// trit rows (quant/trit_rows.h, trit_rows.h). model::Model holds every ternary matrix in one.
inline constexpr quant::TensorType kPq2KernelForms[] = {
    quant::TensorType::kPQ2_0, quant::TensorType::kPq2Panels, quant::TensorType::kTritPlanes,
    quant::TensorType::kTritPanels, quant::TensorType::kTritRows};
inline bool is_pq2_kernel_form(quant::TensorType type) {
  for (const quant::TensorType form : kPq2KernelForms)
    if (type == form) return true;
  return false;
}

// y[t * y_stride + r] = row r of W · token t, for rows [row_begin, row_end) and every token of `a`.
using Pq2RowsKernel = void (*)(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                               int64_t row_begin, int64_t row_end);

void pq2_rows_scalar(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                     int64_t row_begin, int64_t row_end);
// AArch64: NEON (every AArch64 CPU), and with the dot-product extension (cpu_features().dotprod).
void pq2_rows_neon(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end);
void pq2_rows_dotprod(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end);
// Needs AVX2 + FMA + F16C (cpu_features().has_avx2_fma()).
void pq2_rows_avx2(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                   int64_t row_begin, int64_t row_end);
// The same bits with each code times its whole int16 activation (one `vpmaddwd` per 16 weights): the
// kernel of CPUs with split 256-bit units (cpu_features().split_256). Needs what pq2_rows_avx2 needs.
void pq2_rows_avx2_words(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                         int64_t row_begin, int64_t row_end);
// Needs AVX2 + FMA + F16C + AVX-VNNI (cpu_features().has_avx_vnni()); bit-identical to pq2_rows_avx2.
void pq2_rows_avxvnni(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end);
// The group order with an 8-row panel per ymm: the prompt kernel, for every prompt token, of CPUs with
// AVX-VNNI but no AVX-512. Needs what pq2_rows_avxvnni needs; bit-identical to pq2_rows_avx512_groups.
void pq2_rows_avxvnni_panels(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                             int64_t row_begin, int64_t row_end);
// Need AVX-512 F/BW/VL + VNNI (cpu_features().has_avx512_vnni()).
void pq2_rows_avx512_lanes(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                           int64_t row_begin, int64_t row_end);
void pq2_rows_avx512_groups(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                            int64_t row_begin, int64_t row_end);
// The group order with a 16-row panel per zmm, each panel's codes expanded once per token chunk: the
// prompt kernel from kPanelMinTokens tokens where AMX is missing. Bit-identical to
// pq2_rows_avx512_groups.
void pq2_rows_avx512_panels(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                            int64_t row_begin, int64_t row_end);

// Needs AMX-INT8 (cpu_features().has_amx_int8()). Any token count, but it pays only in prefill: every
// 16-token tile costs the same however few of its tokens are real. Its tiles take activations with block
// steps (prompt tokens); others go to pq2_rows_avx512_groups.
void pq2_rows_amx(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                  int64_t row_begin, int64_t row_end);

// Needs AMX-INT8. Up to eight tokens share a tile and the weights are laid out again for every eight, so
// it beats the group-order VNNI kernel from one token on and the chunk kernel below kAmxMinTokens.
// Bit-identical to both. Its tiles take activations with block steps; others go to
// pq2_rows_avx512_groups.
void pq2_rows_amx_few(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                      int64_t row_begin, int64_t row_end);

// Not a matmul: reads the bytes of rows [row_begin, row_end) as the bandwidth probe streams them (four
// streams, stream_read.h) and writes 0 to their outputs for every token. It stands in for the kernels
// where a measurement asks what decode would reach if their arithmetic cost nothing
// (`tern bench --read-only-matmuls`, the Pq2MatvecReadOnly benchmark). Any CPU.
void pq2_rows_read_only(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                        int64_t row_begin, int64_t row_end);

// From this many tokens pq2_rows_amx beats pq2_rows_amx_few (in L2 with block steps, 12-05: 12 tokens
// 42-55 against 63-70 µs, 16 tokens 52-66 against 58-60, 24 equal, 32 132 against 113).
inline constexpr int64_t kAmxMinTokens = 16;
// From this many tokens pq2_rows_avx512_panels beats pq2_rows_avx512_groups (in L2, 12-01: 2 tokens
// 26.5 against 31.8 µs, one token 23.2 against 16.7).
inline constexpr int64_t kPanelMinTokens = 2;

// The kernels this CPU runs (after the TERN_ISA cap) for decode tokens, and for n_tokens prompt tokens.
Pq2RowsKernel pq2_decode_kernel();
Pq2RowsKernel pq2_prompt_kernel(int64_t n_tokens);
// Whether pq2_decode_kernel() gives pq2_rows_avx2's bits (the lane order): every kernel but the AVX-512
// ones (the 16-lane one rounds its own way; VBMI CPUs decode in the group order).
bool pq2_decode_in_lane_order();
// Whether decode tokens take the group order with block steps (AVX-512 VBMI CPUs): their activations are
// then quantised with block steps (act_quant.h) and every form's decode kernel sums a block before it
// scales it.
bool pq2_decode_in_block_order();

// From this many decode tokens in one step (a server's batched decode) decode takes each form's prompt
// kernel where that gives the decode bits (pq2_decode_in_block_order()) and runs on AMX tiles. From DRAM
// on the 27B (Emerald Rapids, `tern bench --parallel`, session 39), PQ2_0 panels with the AMX few-token
// kernel against the block kernel: 2 sequences 4.36 against 5.88-6.12 t/s, 3 6.10 against 6.55, 4
// 7.56 against 7.37-7.61, 5 8.79 against 7.49, 8 12.63 against 8.30-8.57, 16 15.56 against 8.99;
// PTQ1_0 trit panels (expanded to panels for it): 4 5.90 against 5.75, 8 9.72 against 6.35.
inline constexpr int64_t kAmxDecodeMinTokens = 5;
// Whether the decode tokens of a step with `decode_tokens` of them and `prompt_tokens` prompt tokens take
// their form's prompt kernel: where it gives their bits on AMX tiles, from kAmxDecodeMinTokens of them,
// and with any prompt tokens, whose pass then takes them along: one stream of the weights, not two. One
// decode token beside a 1 / 8 / 64-token prompt chunk of the 27B (two sequences, one step): 0.44-0.45 /
// 0.73 / 2.72-2.75 s against 0.67 / 0.82-0.84 / 2.71-2.72 in two passes (session 39).
bool pq2_decode_takes_prompt_kernel(int64_t decode_tokens, int64_t prompt_tokens);

// The row kernels take prompt tokens in chunks whose activations, this many bytes, stay in L2 while the
// chunk sweeps a thread's rows: half of one core's L2, the weights streaming through the rest, and at
// most 512 KiB. On Zen 3 (512 KiB of L2) chunks of 256 KiB ran pp256 of the 27B ≈ 1.09× faster than
// chunks of 512; on the 1–2 MiB L2 hosts the cap is what was measured best.
int64_t prompt_chunk_act_bytes();

// Tokens in one such chunk: a whole number of tiles of tile_tokens, at least one tile.
int64_t prompt_chunk_tokens(int64_t per_token_act_bytes, int64_t tile_tokens);

// y: [a.n_tokens][w.rows]. Rows are split evenly over the pool's threads (pool may be null: runs on
// the caller). Fails with Error(kInternal) if a.k != w.cols, cols is not a multiple of 128 or
// row_bytes is too small for w.type. Allocates nothing. The kernel must be one for w.type.
// With the prompt kernel for a.n_tokens.
void pq2_matmul(float* y, const TernaryMatrix& w, const QuantizedActs& a, ThreadPool* pool);
void pq2_matmul(float* y, const TernaryMatrix& w, const QuantizedActs& a, ThreadPool* pool,
                Pq2RowsKernel kernel);

struct TernaryTarget {
  float* y;  // [a.n_tokens][w.rows]
  TernaryMatrix w;
};

// Several matrices over the same activations in one parallel pass: the rows of all targets, taken as
// one sequence, are split over the pool's threads. Same checks as pq2_matmul, per target. `dense` (may
// be null): tasks the same job runs first, each thread claiming them before its rows (the GDN's decay
// projections beside its qkv and z).
void pq2_matmul_shared(std::span<const TernaryTarget> targets, const QuantizedActs& a, ThreadPool* pool,
                       Pq2RowsKernel kernel, const DenseTasks* dense = nullptr);

// pq2_matmul, and best[t] = ref::argmax of token t's row of y (the greedy pick of a head): each thread
// folds the rows it computed into its own pick while they are in its cache, then the picks are folded
// (ref::ArgmaxFold: argmax's choice whichever rows each thread took). Allocates only to grow its picks.
void pq2_matmul_argmax(float* y, int32_t* best, const TernaryMatrix& w, const QuantizedActs& a,
                       ThreadPool* pool, Pq2RowsKernel kernel);

}  // namespace tern::kernels::cpu
