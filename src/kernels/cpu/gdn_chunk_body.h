// The chunked form of one GDN head in plain fp32 loops, written so every inner loop is an axpy over a
// contiguous row (the compiler vectorises those with the target flags of the including file). Included
// only by gdn_cpu.cpp (baseline flags) and gdn_cpu_avx2.cpp (-mavx2 -mfma): the anonymous namespace gives
// each its own copy, so the two builds never merge at link time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/gdn_cpu.h"

namespace tern::kernels::cpu {
namespace {

void axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] += a * x[j];
}

void scale(float* y, float a, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] *= a;
}

// One chunk of c ≤ chunk tokens starting at token t0 (model-spec §5.4, chunked form).
void chunk_step(const GdnHead& h, int64_t t0, int64_t c, int64_t chunk, float* scratch) {
  const int64_t dk = h.dk;
  const int64_t dv = h.dv;
  float* step_decay = scratch;        // [C]  e^{g_t}
  float* decay = step_decay + chunk;  // [C]  e^{γ_t}
  float* row_decay = decay + chunk;   // [C]  e^{γ_t−γ_s} for the current row t; the last row is the tail
  float* a = row_decay + chunk;       // [C][C]  β_t (k_t·k_s) e^{γ_t−γ_s}, s < t
  float* qk = a + chunk * chunk;      // [C][C]  (q_t·k_s) e^{γ_t−γ_s}, s ≤ t
  float* kt = qk + chunk * chunk;     // [dk][C] Kᵀ
  float* u = kt + dk * chunk;         // [C][dv] U, then Vnew
  float* w = u + chunk * dv;          // [C][dk] W
  auto q_row = [&](int64_t t) { return h.q + (t0 + t) * h.qk_stride; };
  auto k_row = [&](int64_t t) { return h.k + (t0 + t) * h.qk_stride; };
  auto v_row = [&](int64_t t) { return h.v + (t0 + t) * h.v_stride; };
  auto beta = [&](int64_t t) { return h.beta[(t0 + t) * h.gate_stride]; };
  float* s = h.state;

  for (int64_t t = 0; t < c; ++t) {
    step_decay[t] = std::exp(h.g[(t0 + t) * h.gate_stride]);
    decay[t] = (t == 0 ? 1.0f : decay[t - 1]) * step_decay[t];
    const float* kr = k_row(t);
    for (int64_t i = 0; i < dk; ++i) kt[i * chunk + t] = kr[i];
  }
  // Row t of A and QK: the dots against k_0..k_t as axpys over the rows of Kᵀ, then the decay row
  // e^{γ_t−γ_s} = e^{γ_{t−1}−γ_s} · e^{g_t}.
  for (int64_t t = 0; t < c; ++t) {
    float* a_row = a + t * chunk;
    float* qk_row = qk + t * chunk;
    std::fill_n(a_row, t + 1, 0.0f);
    std::fill_n(qk_row, t + 1, 0.0f);
    const float* kr = k_row(t);
    const float* qr = q_row(t);
    for (int64_t i = 0; i < dk; ++i) {
      axpy(a_row, kr[i], kt + i * chunk, t + 1);
      axpy(qk_row, qr[i], kt + i * chunk, t + 1);
    }
    scale(row_decay, step_decay[t], t);
    row_decay[t] = 1.0f;
    const float bt = beta(t);
    for (int64_t s2 = 0; s2 <= t; ++s2) {
      a_row[s2] *= bt * row_decay[s2];
      qk_row[s2] *= row_decay[s2];
    }
  }
  // U = (I+A)⁻¹ diag(β) V and W = (I+A)⁻¹ diag(β e^γ) K by forward substitution.
  for (int64_t t = 0; t < c; ++t) {
    float* ut = u + t * dv;
    float* wt = w + t * dk;
    const float bt = beta(t);
    const float bte = bt * decay[t];
    const float* vr = v_row(t);
    const float* kr = k_row(t);
    for (int64_t j = 0; j < dv; ++j) ut[j] = bt * vr[j];
    for (int64_t i = 0; i < dk; ++i) wt[i] = bte * kr[i];
    for (int64_t s2 = 0; s2 < t; ++s2) {
      axpy(ut, -a[t * chunk + s2], u + s2 * dv, dv);
      axpy(wt, -a[t * chunk + s2], w + s2 * dk, dk);
    }
  }
  // Vnew = U − W·S, in place.
  for (int64_t t = 0; t < c; ++t) {
    for (int64_t i = 0; i < dk; ++i) axpy(u + t * dv, -w[t * dk + i], s + i * dv, dv);
  }
  // O_t = e^{γ_t} q_t·S + Σ_{s≤t} QK[t][s] Vnew_s.
  for (int64_t t = 0; t < c; ++t) {
    float* o = h.out + (t0 + t) * h.v_stride;
    std::fill_n(o, dv, 0.0f);
    const float* qr = q_row(t);
    for (int64_t i = 0; i < dk; ++i) axpy(o, qr[i], s + i * dv, dv);
    scale(o, decay[t], dv);
    for (int64_t s2 = 0; s2 <= t; ++s2) axpy(o, qk[t * chunk + s2], u + s2 * dv, dv);
  }
  // S_next = e^{γ_C} S + Σ_t e^{γ_C−γ_t} k_t Vnew_tᵀ; row_decay holds e^{γ_C−γ_t} from the last row.
  for (int64_t t = 0; t < c; ++t) {
    const float f = row_decay[t];
    for (int64_t i = 0; i < dk; ++i) kt[i * chunk + t] *= f;
  }
  for (int64_t i = 0; i < dk; ++i) {
    float* s_row = s + i * dv;
    scale(s_row, decay[c - 1], dv);
    for (int64_t t = 0; t < c; ++t) axpy(s_row, kt[i * chunk + t], u + t * dv, dv);
  }
}

void chunked_head_body(const GdnHead& head, int64_t chunk, float* scratch) {
  for (int64_t t0 = 0; t0 < head.n_tokens; t0 += chunk) {
    chunk_step(head, t0, std::min(chunk, head.n_tokens - t0), chunk, scratch);
  }
}

}  // namespace
}  // namespace tern::kernels::cpu
