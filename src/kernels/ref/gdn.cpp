#include "kernels/ref/gdn.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace tern::kernels::ref {

void gdn_recurrent(float* out, float* state, const GdnInputs& in, const GdnDims& dims) {
  const int64_t rep = dims.n_v / dims.n_k;
  const int64_t dk = dims.dk;
  const int64_t dv = dims.dv;
  for (int64_t t = 0; t < in.n_tokens; ++t) {
    for (int64_t h = 0; h < dims.n_v; ++h) {
      const float* qh = in.q + (t * dims.n_k + h / rep) * dk;
      const float* kh = in.k + (t * dims.n_k + h / rep) * dk;
      const float* vh = in.v + (t * dims.n_v + h) * dv;
      const double decay = std::exp(static_cast<double>(in.g[t * dims.n_v + h]));
      const double beta = in.beta[t * dims.n_v + h];
      float* s = state + h * dk * dv;
      float* o = out + (t * dims.n_v + h) * dv;
      for (int64_t j = 0; j < dv; ++j) {
        double r = 0.0;  // (e^g S)ᵀ k, column j
        for (int64_t i = 0; i < dk; ++i) r += decay * s[i * dv + j] * kh[i];
        const double delta = beta * (vh[j] - r);
        double o_j = 0.0;
        for (int64_t i = 0; i < dk; ++i) {
          s[i * dv + j] = static_cast<float>(decay * s[i * dv + j] + static_cast<double>(kh[i]) * delta);
          o_j += static_cast<double>(s[i * dv + j]) * qh[i];
        }
        o[j] = static_cast<float>(o_j);
      }
    }
  }
}

size_t gdn_chunked_scratch_size(const GdnDims& dims, int64_t chunk) {
  // gamma[C] + tail[C] + A[C][C] + QK[C][C] + U[C][dv] + W[C][dk] + Vnew[C][dv]
  return static_cast<size_t>(chunk * (2 + 2 * chunk + 2 * dims.dv + dims.dk));
}

void gdn_chunked(float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t chunk,
                 std::span<double> scratch) {
  if (chunk <= 0 || scratch.size() < gdn_chunked_scratch_size(dims, chunk)) {
    fail(ErrorKind::kInternal, "gdn_chunked: chunk {} with {} doubles of scratch", chunk, scratch.size());
  }
  const int64_t rep = dims.n_v / dims.n_k;
  const int64_t dk = dims.dk;
  const int64_t dv = dims.dv;
  double* gamma = scratch.data();
  double* tail = gamma + chunk;
  double* a = tail + chunk;
  double* qk = a + chunk * chunk;
  double* u = qk + chunk * chunk;
  double* w = u + chunk * dv;
  double* vnew = w + chunk * dk;

  for (int64_t t0 = 0; t0 < in.n_tokens; t0 += chunk) {
    const int64_t c = std::min(chunk, in.n_tokens - t0);
    for (int64_t h = 0; h < dims.n_v; ++h) {
      auto q_row = [&](int64_t t) { return in.q + ((t0 + t) * dims.n_k + h / rep) * dk; };
      auto k_row = [&](int64_t t) { return in.k + ((t0 + t) * dims.n_k + h / rep) * dk; };
      auto v_row = [&](int64_t t) { return in.v + ((t0 + t) * dims.n_v + h) * dv; };
      auto beta = [&](int64_t t) { return static_cast<double>(in.beta[(t0 + t) * dims.n_v + h]); };
      auto kdot = [&](const float* x, const float* y) {
        double acc = 0.0;
        for (int64_t i = 0; i < dk; ++i) acc += static_cast<double>(x[i]) * y[i];
        return acc;
      };
      float* s = state + h * dk * dv;

      // γ_t: cumulative log-decay inside the chunk.
      double running = 0.0;
      for (int64_t t = 0; t < c; ++t) gamma[t] = running += in.g[(t0 + t) * dims.n_v + h];
      // A[t][s] = β_t (k_t·k_s) e^{γ_t−γ_s} for t > s (strictly lower triangular), and
      // QK[t][s] = (q_t·k_s) e^{γ_t−γ_s} for t ≥ s (the causal decay matrix D includes the diagonal).
      for (int64_t t = 0; t < c; ++t) {
        for (int64_t s2 = 0; s2 <= t; ++s2) {
          const double decay = std::exp(gamma[t] - gamma[s2]);
          if (s2 < t) a[t * chunk + s2] = beta(t) * kdot(k_row(t), k_row(s2)) * decay;
          qk[t * chunk + s2] = kdot(q_row(t), k_row(s2)) * decay;
        }
      }
      // U = (I+A)⁻¹ diag(β) V and W = (I+A)⁻¹ diag(β e^γ) K by forward substitution.
      for (int64_t t = 0; t < c; ++t) {
        const double bt = beta(t);
        const double bte = bt * std::exp(gamma[t]);
        for (int64_t j = 0; j < dv; ++j) u[t * dv + j] = bt * v_row(t)[j];
        for (int64_t i = 0; i < dk; ++i) w[t * dk + i] = bte * k_row(t)[i];
        for (int64_t s2 = 0; s2 < t; ++s2) {
          const double ats = a[t * chunk + s2];
          for (int64_t j = 0; j < dv; ++j) u[t * dv + j] -= ats * u[s2 * dv + j];
          for (int64_t i = 0; i < dk; ++i) w[t * dk + i] -= ats * w[s2 * dk + i];
        }
      }
      // Vnew = U − W·S.
      for (int64_t t = 0; t < c; ++t) {
        for (int64_t j = 0; j < dv; ++j) {
          double ws = 0.0;
          for (int64_t i = 0; i < dk; ++i) ws += w[t * dk + i] * s[i * dv + j];
          vnew[t * dv + j] = u[t * dv + j] - ws;
        }
      }
      // O_t = e^{γ_t} q_t·S + Σ_{s≤t} (q_t·k_s) e^{γ_t−γ_s} Vnew_s (the diagonal included).
      for (int64_t t = 0; t < c; ++t) {
        const float* qt = q_row(t);
        const double et = std::exp(gamma[t]);
        float* o = out + ((t0 + t) * dims.n_v + h) * dv;
        for (int64_t j = 0; j < dv; ++j) {
          double qs = 0.0;
          for (int64_t i = 0; i < dk; ++i) qs += static_cast<double>(qt[i]) * s[i * dv + j];
          double intra = 0.0;
          for (int64_t s2 = 0; s2 <= t; ++s2) intra += qk[t * chunk + s2] * vnew[s2 * dv + j];
          o[j] = static_cast<float>(et * qs + intra);
        }
      }
      // S_next = e^{γ_C} S + Σ_t e^{γ_C−γ_t} k_t Vnew_tᵀ.
      const double last = gamma[c - 1];
      const double chunk_decay = std::exp(last);
      for (int64_t t = 0; t < c; ++t) tail[t] = std::exp(last - gamma[t]);
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t j = 0; j < dv; ++j) {
          double acc = chunk_decay * s[i * dv + j];
          for (int64_t t = 0; t < c; ++t) acc += tail[t] * k_row(t)[i] * vnew[t * dv + j];
          s[i * dv + j] = static_cast<float>(acc);
        }
      }
    }
  }
}

}  // namespace tern::kernels::ref
