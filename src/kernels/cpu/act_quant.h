// Activation quantisation for the ternary matmul kernels: fp32 -> int8 with one fp32 scale per 32
// consecutive values (four groups per 128-value weight block) and per-block integer sums, stored in the
// element order the PQ2_0 kernels read. Within block b, element j = 4i + s (i in 0..31, s in 0..3) is stored
// at q[b*128 + 32s + i]: the s-th 2-bit field of every PQ2_0 qs byte i then lines up with 32 contiguous
// activations, so one (qs >> 2s) & 3 vector multiplies one activation vector. Group g (values
// 32g..32g+31) then occupies bytes 8g..8g+7 of each of the four vectors, i.e. int32 lanes 2g and 2g+1
// after maddubs + madd: a per-32 scale costs the kernel nothing more than a per-128 one (one vector of
// eight lane scales instead of a broadcast). Per-32 keeps one outlier from coarsening 128 values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tern::kernels::cpu {

inline constexpr int64_t kActBlock = 128;
inline constexpr int64_t kActGroup = 32;  // values sharing one scale
// Per block, the scale of each int32 lane after maddubs + madd: {d0, d0, d1, d1, d2, d2, d3, d3}.
inline constexpr int64_t kLaneScales = 8;
// maddubs sums neighbouring byte pairs into 16 int16 lanes per 32 activations; lane_sums holds, per
// block, the sum over the four 32-vectors of those pair sums (16 values; their total is Σ q).
inline constexpr int64_t kLaneSums = 16;

// A read-only view of quantised activations for n_tokens rows of k values (k a multiple of 128).
struct QuantizedActs {
  const int8_t* q = nullptr;           // [n_tokens][k], permuted per block as described above
  const float* lane_scales = nullptr;  // [n_tokens][k/128][8]: value = q * d of its group
  const int16_t* lane_sums = nullptr;  // [n_tokens][k/128][16]
  int64_t k = 0;
  int64_t n_tokens = 0;

  int64_t blocks() const { return k / kActBlock; }
  const int8_t* token_q(int64_t t) const { return q + t * k; }
  const float* token_lane_scales(int64_t t) const { return lane_scales + t * blocks() * kLaneScales; }
  const int16_t* token_lane_sums(int64_t t) const { return lane_sums + t * blocks() * kLaneSums; }
};

// Owns the aligned storage for quantised activations. reserve() allocates only when the request
// grows, so the token loop allocates nothing once warm.
class ActBuffer {
 public:
  void reserve(int64_t k, int64_t n_tokens);
  // Quantises x: [n_tokens][k] (k a multiple of 128; fails with Error(kInternal) otherwise) into this
  // buffer, growing it if needed, and returns the view.
  QuantizedActs quantize(const float* x, int64_t k, int64_t n_tokens);

 private:
  struct AlignedFree {
    void operator()(void* p) const;
  };
  std::unique_ptr<int8_t[], AlignedFree> q_;
  std::unique_ptr<float[], AlignedFree> lane_scales_;
  std::unique_ptr<int16_t[], AlignedFree> lane_sums_;
  size_t capacity_values_ = 0;
};

// Quantises one block of 128 values, per group of 32: d = max|x| / 127 (0 for an all-zero group), q =
// nearest integer (ties to even) of x * (127 / max|x|). A group holding a NaN or infinity gets d = NaN
// and q = 0, so the non-finite value reaches the output. Writes 128 permuted bytes, 8 lane scales and
// 16 lane sums.
void quantize_block(const float* x, int8_t* q, float* lane_scales, int16_t* lane_sums);

// Quantises k values (k a multiple of 128) block by block into the given arrays.
void quantize_row(const float* x, int64_t k, int8_t* q, float* lane_scales, int16_t* lane_sums);

}  // namespace tern::kernels::cpu
