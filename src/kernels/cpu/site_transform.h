// The Hadamard activation sites (ref::site_forward / ref::site_inverse) with the signs and the 1/√n
// scale folded into one pass and the butterflies in SIMD registers. The operations and their order are
// the oracle's (signs, scale, then stages h = 1, 2, 4, ... each a + b / a − b), so the result is
// bit-identical to it, which the tests check.
#pragma once

#include <cstdint>
#include <span>

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

// Same contract as ref::site_forward / ref::site_inverse; blocks below 8 take the oracle's path. With a
// pool, a call of enough values (a prompt chunk's rows, the FFN's wide site) is spread over its threads
// by whole blocks, with the same bits.
void site_forward(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block,
                  ThreadPool* pool = nullptr);
void site_inverse(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block,
                  ThreadPool* pool = nullptr);

// The FFN's inner activation and its site in one pass per row (model-spec §5.5, §4.4): gate ←
// T_K(silu(gate) · up) with the ffn_inner signs, each block transformed while it is still in cache; block 0
// means a dense file (no site). ref::swiglu then ref::site_forward up to silu.h's rounding. The pool as
// for site_forward.
void swiglu_site(float* gate, const float* up, int64_t n_tokens, int64_t width, std::span<const float> signs,
                 int64_t block, ThreadPool* pool = nullptr);

// One block of `block` values (a power of two ≥ 8): x ← H x, unnormalised. Needs AVX2.
void fwht_avx2(float* x, int64_t block);

}  // namespace tern::kernels::cpu
