#include "kernels/cpu/site_transform.h"

#include <algorithm>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "hadamard/transform.h"
#include "kernels/cpu/silu.h"
#include "kernels/ref/site_transform.h"

namespace tern::kernels::cpu {

namespace {

using Fwht = void (*)(float* x, int64_t n);

// The vector butterflies this CPU runs; null where only the oracle's exist.
Fwht vector_fwht() {
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) return fwht_avx2;
#endif
  return nullptr;
}

// Shapes the oracle would refuse go to it, so the refusal is the same.
bool fast_path(int64_t width, std::span<const float> signs, int64_t block) {
  const bool shape_ok = block >= 8 && (block & (block - 1)) == 0 && width % block == 0 &&
                        (signs.empty() || static_cast<int64_t>(signs.size()) == width);
  return shape_ok && vector_fwht() != nullptr;
}

// Below this many values a call stays on the caller: a pool job costs about what a few thousand values'
// transform does. So decode's 5120-wide sites stay whole and its 17408-wide FFN site splits.
constexpr int64_t kPoolMinValues = 16384;

// f(at, offset) for every unit of `block` values of the n_tokens × width rows (at: its first value's
// index in the rows, offset: in its row), on the pool in guided ranges when there are enough values to
// pay for a job. Each unit is computed alone, so the split does not change a bit.
template <class F>
void for_units(int64_t n_tokens, int64_t width, int64_t block, ThreadPool* pool, F&& f) {
  const int64_t per_row = width / block, units = n_tokens * per_row;
  const auto run = [&](int64_t first, int64_t last) {
    for (int64_t u = first; u < last; ++u) {
      const int64_t offset = u % per_row * block;
      f(u / per_row * width + offset, offset);
    }
  };
  if (pool == nullptr || pool->size() < 2 || n_tokens * width < kPoolMinValues) {
    run(0, units);
    return;
  }
  const int64_t min_units = std::max<int64_t>(1, 4096 / block);
  pool->for_ranges_guided(units, min_units, [&](int64_t first, int64_t last, int) { run(first, last); });
}

// One unit (`block` values at x): multiply by `before` (may be null) and the block's scale, the
// butterflies, multiply by `after` (may be null); both sign pointers at the unit's first value. Every
// product rounds as the oracle's separate multiplies (a ±1 sign is exact).
void transform_unit(float* x, const float* before, const float* after, int64_t block, float scale,
                    Fwht fwht) {
  if (before == nullptr) {
    for (int64_t i = 0; i < block; ++i) x[i] *= scale;
  } else {
    for (int64_t i = 0; i < block; ++i) x[i] = x[i] * before[i] * scale;
  }
  fwht(x, block);
  if (after != nullptr)
    for (int64_t i = 0; i < block; ++i) x[i] *= after[i];
}

// The signs from `offset` on, or null when there are none.
const float* signs_at(std::span<const float> signs, int64_t offset) {
  return signs.empty() ? nullptr : signs.data() + offset;
}

void transform_rows(float* x, int64_t n_tokens, int64_t width, std::span<const float> before,
                    std::span<const float> after, int64_t block, ThreadPool* pool) {
  const float scale = hadamard::block_scale(block);
  const Fwht fwht = vector_fwht();
  for_units(n_tokens, width, block, pool, [&](int64_t at, int64_t offset) {
    transform_unit(x + at, signs_at(before, offset), signs_at(after, offset), block, scale, fwht);
  });
}

}  // namespace

void site_forward(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block,
                  ThreadPool* pool) {
  if (fast_path(width, signs, block)) {
    transform_rows(x, n_tokens, width, signs, {}, block, pool);
  } else {
    ref::site_forward(x, n_tokens, width, signs, block);
  }
}

void site_inverse(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block,
                  ThreadPool* pool) {
  if (fast_path(width, signs, block)) {
    transform_rows(x, n_tokens, width, {}, signs, block, pool);
  } else {
    ref::site_inverse(x, n_tokens, width, signs, block);
  }
}

void swiglu_site(float* gate, const float* up, int64_t n_tokens, int64_t width, std::span<const float> signs,
                 int64_t block, ThreadPool* pool) {
  const SiluKernel silu = silu_kernel();
  if (block == 0 || !fast_path(width, signs, block)) {
    for (int64_t t = 0; t < n_tokens; ++t) silu(gate + t * width, gate + t * width, up + t * width, width);
    if (block > 0) ref::site_forward(gate, n_tokens, width, signs, block);
    return;
  }
  // Each unit goes through SiLU and the transform while it is in L1; a unit is a whole number of the
  // SiLU kernels' vectors (blocks are powers of two ≥ 8), so it rounds as the whole row would.
  const float scale = hadamard::block_scale(block);
  const Fwht fwht = vector_fwht();
  for_units(n_tokens, width, block, pool, [&](int64_t at, int64_t offset) {
    silu(gate + at, gate + at, up + at, block);
    transform_unit(gate + at, signs_at(signs, offset), nullptr, block, scale, fwht);
  });
}

}  // namespace tern::kernels::cpu
