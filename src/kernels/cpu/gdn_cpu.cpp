#include "kernels/cpu/gdn_cpu.h"

#include <algorithm>
#include <cmath>

#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace tern::kernels::cpu {

namespace {

void recurrent_columns_scalar(const GdnHead& h, int64_t j0, int64_t j1) {
  const int64_t width = j1 - j0;
  float r[kColumnBlock];
  float p[kColumnBlock];
  for (int64_t t = 0; t < h.n_tokens; ++t) {
    const float* q = h.q + t * h.qk_stride;
    const float* k = h.k + t * h.qk_stride;
    const float* v = h.v + t * h.v_stride + j0;
    float* o = h.out + t * h.v_stride + j0;
    const float decay = std::exp(h.g[t * h.gate_stride]);
    const float beta = h.beta[t * h.gate_stride];
    float kq = 0.0f;
    for (int64_t i = 0; i < h.dk; ++i) kq += k[i] * q[i];
    std::fill_n(r, width, 0.0f);
    std::fill_n(p, width, 0.0f);
    for (int64_t i = 0; i < h.dk; ++i) {
      const float* s = h.state + i * h.dv + j0;
      for (int64_t j = 0; j < width; ++j) {
        r[j] += k[i] * s[j];
        p[j] += q[i] * s[j];
      }
    }
    float* delta = r;  // δ_j replaces r_j
    for (int64_t j = 0; j < width; ++j) {
      delta[j] = beta * (v[j] - decay * r[j]);
      o[j] = decay * p[j] + kq * delta[j];
    }
    for (int64_t i = 0; i < h.dk; ++i) {
      float* s = h.state + i * h.dv + j0;
      for (int64_t j = 0; j < width; ++j) s[j] = decay * s[j] + k[i] * delta[j];
    }
  }
}

// v head h of the inputs, grouped order: it reads q/k head h / (n_v / n_k).
GdnHead head_view(float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t h) {
  const int64_t qk_head = h / (dims.n_v / dims.n_k);
  return GdnHead{in.q + qk_head * dims.dk,
                 in.k + qk_head * dims.dk,
                 dims.n_k * dims.dk,
                 in.v + h * dims.dv,
                 out + h * dims.dv,
                 dims.n_v * dims.dv,
                 in.g + h,
                 in.beta + h,
                 dims.n_v,
                 state + h * dims.dk * dims.dv,
                 dims.dk,
                 dims.dv,
                 in.n_tokens};
}

template <class F>
void run_tasks(ThreadPool* pool, int64_t count, F&& task) {
  if (pool != nullptr && pool->size() > 1) {
    pool->for_each(count, [&](int64_t index, int) { task(index); });
  } else {
    for (int64_t index = 0; index < count; ++index) task(index);
  }
}

}  // namespace

const GdnKernels& gdn_kernels_scalar() {
  static constexpr GdnKernels kKernels{"scalar", kColumnBlock, recurrent_columns_scalar};
  return kKernels;
}

const GdnKernels& gdn_kernels() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx512_vnni()) return gdn_kernels_avx512();
  if (cpu.has_avx2_fma()) return gdn_kernels_avx2();
#endif
  return gdn_kernels_scalar();
}

void gdn_recurrent(float* out, float* state, const GdnInputs& in, const GdnDims& dims, ThreadPool* pool,
                   const GdnKernels& kernels) {
  // A task is a slab of a head's columns, so no two threads write near each other's state (with 32-column
  // tasks two threads on one head made 2 threads slower than 1).
  const int64_t slabs = (dims.dv + kSlabColumns - 1) / kSlabColumns;
  run_tasks(pool, dims.n_v * slabs, [&](int64_t task) {
    const GdnHead head = head_view(out, state, in, dims, task / slabs);
    const int64_t j0 = task % slabs * kSlabColumns, j1 = std::min(dims.dv, j0 + kSlabColumns);
    for (int64_t j = j0; j < j1; j += kernels.column_block)
      kernels.recurrent_columns(head, j, std::min(j1, j + kernels.column_block));
  });
}

}  // namespace tern::kernels::cpu
