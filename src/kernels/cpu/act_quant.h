// Activation quantisation for the ternary matmul kernels. Each value is split into two int8 digits,
//   x ≈ step · (256·hi + lo),   step = max|x| / (127·256) per group of 32 consecutive values,
// hi the nearest integer of x/(256·step) and lo the nearest integer of the remainder in steps (|lo| ≤ 127;
// the rare ±128 is clamped). The error is at most one step (≈ 3e-5 of the group's largest value, about
// fp16 precision), so the int8 kernels stay as exact as the fp32 oracle's argmax needs, while every product
// is still a u8 × s8 one: the weight operand is the 2-bit code itself (dot(w,x) = d_w·(Σ code·x − Σ x)).
//
// Element order: within block b (128 values), value j = 4i + s (i in 0..31, s in 0..3) is stored at byte
// 32s + i of the block's hi plane and of its lo plane, so the s-th 2-bit field of every PQ2_0 qs byte i
// lines up with 32 contiguous activations. Per block and token the layout is {hi[128], lo[128]}.
// Two lane views exist for the two vector widths:
//   ymm (8 int32 lanes): lane l sums bytes 4l..4l+3 of all four 32-byte vectors → group l/2.
//   zmm (16 int32 lanes over [s0|s1] and [s2|s3]): lane l sums bytes 4(l%8).. of two vectors → group (l%8)/2.
// For each, the quantiser stores per block the lanes' scales (step of their group) and the lanes' sums,
// the "− Σ x" term in integers: ymm, −Σ (256·hi + lo) over the lane's bytes (the value the kernels start
// their lane sums from); zmm, −Σ hi (the value the kernel starts its hi chain from) then Σ lo, 16 lanes
// each.
//
// Prompt tokens take one step per block (StepScope::kBlock): the smallest power of two at least every
// group's step, so the four groups share it. Then each group's exact dot times the step is exact in fp32,
// and the group order's sum of four products (pq2_matmul.h) equals the block's one product bit for bit:
// a kernel may sum a block's integers before it scales (the AMX prompt kernel does). A value's error is
// then at most 1/16256 of its block's largest (1/32512 of its group's with group steps); the blockwise
// Hadamard rotation before every ternary matmul spreads a block's values, so its groups are alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/huge_pages.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

inline constexpr int64_t kActBlock = 128;
inline constexpr int64_t kActGroup = 32;        // values sharing one scale
inline constexpr int64_t kActBlockBytes = 256;  // hi plane + lo plane
inline constexpr int64_t kYmmLanes = 8;
inline constexpr int64_t kZmmLanes = 16;
inline constexpr int64_t kZmmSums = 2 * kZmmLanes;   // −Σ hi, then Σ lo
inline constexpr float kLoDigit = 256.0f;            // weight of hi relative to lo
inline constexpr int64_t kNoBlockSteps = INT64_MAX;  // QuantizedActs::block_steps_from: no token has them
// The smallest block step: below it a step times a group's dot could be subnormal and round.
inline constexpr float kLeastBlockStep = 0x1p-100f;

// Whose largest value sets a step: each group of 32 (decode tokens), or the whole block of 128 (prompt
// tokens; see above).
enum class StepScope { kGroup, kBlock };

// A read-only view of quantised activations for n_tokens rows of k values (k a multiple of 128).
struct QuantizedActs {
  const int8_t* q = nullptr;              // [n_tokens][k/128][256]
  const float* ymm_scales = nullptr;      // [n_tokens][k/128][8]
  const int32_t* ymm_neg_sums = nullptr;  // [n_tokens][k/128][8]
  const float* zmm_scales = nullptr;      // [n_tokens][k/128][16]
  const int32_t* zmm_sums = nullptr;      // [n_tokens][k/128][16]
  int64_t k = 0;
  int64_t n_tokens = 0;
  int64_t block_steps_from = kNoBlockSteps;  // tokens from this one on were quantised with block steps

  // Every token's blocks have one power-of-two step for their four groups (StepScope::kBlock).
  bool block_steps() const { return block_steps_from <= 0; }
  int64_t blocks() const { return k / kActBlock; }
  const int8_t* token_q(int64_t t) const { return q + t * blocks() * kActBlockBytes; }
  const float* token_ymm_scales(int64_t t) const { return ymm_scales + t * blocks() * kYmmLanes; }
  const int32_t* token_ymm_neg_sums(int64_t t) const { return ymm_neg_sums + t * blocks() * kYmmLanes; }
  const float* token_zmm_scales(int64_t t) const { return zmm_scales + t * blocks() * kZmmLanes; }
  const int32_t* token_zmm_sums(int64_t t) const { return zmm_sums + t * blocks() * kZmmSums; }
  // Tokens [first, first + count) of this view.
  QuantizedActs slice(int64_t first, int64_t count) const {
    return {token_q(first),
            token_ymm_scales(first),
            token_ymm_neg_sums(first),
            token_zmm_scales(first),
            token_zmm_sums(first),
            k,
            count,
            block_steps_from - std::min(first, block_steps_from)};
  }
};

// −Σ (256·hi + lo) of every scale group of tokens [first, first + count), [count][k/128][4] (ymm lanes
// 2g and 2g + 1 cover group g): the group-order panel kernels start each group from it.
void group_neg_sums(const QuantizedActs& a, int64_t first, int64_t count, int32_t* out);

// One quantised block's pointers (the per-block slices of a QuantizedActs row).
struct ActBlockOut {
  int8_t* q;              // 256 bytes
  float* ymm_scales;      // 8
  int32_t* ymm_neg_sums;  // 8
  float* zmm_scales;      // 16
  int32_t* zmm_sums;      // 16
};

// Owns the storage for quantised activations (streamed: a prompt's buffer is swept token row by token row,
// one 4 KiB page per row at 27B widths). reserve() allocates only when the request
// grows, so the token loop allocates nothing once warm.
class ActBuffer {
 public:
  void reserve(int64_t k, int64_t n_tokens);
  // Quantises x: [n_tokens][k] (k a multiple of 128; fails with Error(kInternal) otherwise) into this
  // buffer, growing it if needed, and returns the view: tokens before `block_steps_from` with group steps,
  // the rest with block steps. Blocks are spread over `pool` when given.
  QuantizedActs quantize(const float* x, int64_t k, int64_t n_tokens, ThreadPool* pool = nullptr,
                         int64_t block_steps_from = kNoBlockSteps);

 private:
  StreamedArray<int8_t> q_;
  StreamedArray<float> ymm_scales_, zmm_scales_;
  StreamedArray<int32_t> ymm_neg_sums_, zmm_sums_;
  size_t capacity_blocks_ = 0;
};

// The step the four groups of a block share under StepScope::kBlock, from their own steps: NaN if one
// is NaN, 0 if all are 0, else the smallest power of two at least each of them and kLeastBlockStep.
float block_step(const float (&group_steps)[kActBlock / kActGroup]);

// Quantises one block of 128 values. A group holding a NaN or infinity gets scale NaN and digits 0, so
// the non-finite value reaches the output (under kBlock the whole block does); an all-zero group gets
// scale 0.
void quantize_block(const float* x, const ActBlockOut& out, StepScope scope = StepScope::kGroup);
// The same, byte for byte, with AVX2 + FMA, or with AVX-512 (F, BW, VNNI); run only where cpu_features()
// reports them.
void quantize_block_avx2(const float* x, const ActBlockOut& out, StepScope scope = StepScope::kGroup);
void quantize_block_avx512(const float* x, const ActBlockOut& out, StepScope scope = StepScope::kGroup);

}  // namespace tern::kernels::cpu
