// The GDN block's non-matmul work at the 27B shape (n_k 16, n_v 48, dk = dv = 128, conv 4 over 10240
// channels), oracle against the CPU kernels. Decode rotates through the recurrent states of all 48 GDN
// layers (150 MB, more than the caches), as a real token does. Rates are per CPU-second of the main
// thread (see cpu_kernels_bench.cpp).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/huge_pages.h"
#include "core/thread_pool.h"
#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/norms_cpu.h"
#include "kernels/ref/conv.h"
#include "kernels/ref/gdn.h"
#include "kernels/ref/l2_norm.h"
#include "kernels/ref/rms_norm.h"

namespace tern::kernels::cpu {
namespace {

constexpr GdnDims k27b{16, 48, 128, 128};
constexpr int64_t kGdnLayers = 48;
constexpr int64_t kConvChannels = 10240;

enum Impl : int64_t { kRef = 0, kScalar = 1, kAvx2 = 2, kAvx512 = 3 };

const char* label(int64_t impl) {
  const char* names[] = {"ref", "scalar", "avx2", "avx512"};
  return names[impl];
}

const GdnKernels& kernels_of(int64_t impl) {
#if defined(__x86_64__)
  if (impl == kAvx512) return gdn_kernels_avx512();
  if (impl == kAvx2) return gdn_kernels_avx2();
#endif
  return gdn_kernels_scalar();
}

ThreadPool& pool_of(int64_t threads) {
  static ThreadPool one(1), two(2);
  return threads == 1 ? one : two;
}

std::vector<float> uniform(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  return x;
}

struct Inputs {
  std::vector<float> q, k, v, g, beta;
  Inputs(const GdnDims& d, int64_t n)
      : q(uniform(n * d.n_k * d.dk, -1.0f, 1.0f, 1)),
        k(uniform(n * d.n_k * d.dk, -1.0f, 1.0f, 2)),
        v(uniform(n * d.n_v * d.dv, -1.0f, 1.0f, 3)),
        g(uniform(n * d.n_v, -1.0f, 0.0f, 4)),
        beta(uniform(n * d.n_v, 0.0f, 1.0f, 5)) {
    for (int64_t r = 0; r < n * d.n_k; ++r) {
      ref::l2_norm(&q[static_cast<size_t>(r * d.dk)], d.dk);
      ref::l2_norm(&k[static_cast<size_t>(r * d.dk)], d.dk);
    }
  }
  GdnInputs view(int64_t n) const { return {q.data(), k.data(), v.data(), g.data(), beta.data(), n}; }
};

bool skip_unsupported(benchmark::State& state, int64_t impl) {
#if defined(__x86_64__)
  const bool supported = (impl != kAvx2 || cpu_features().has_avx2_fma()) &&
                         (impl != kAvx512 || cpu_features().has_avx512_vnni());
#else
  const bool supported = impl != kAvx2 && impl != kAvx512;
#endif
  if (!supported) {
    state.SkipWithError("needs AVX2 or AVX-512");
    return true;
  }
  state.SetLabel(label(impl));
  return false;
}

// One decode token through one GDN layer's recurrence; args: impl, threads.
void BM_GdnRecurrentStep(benchmark::State& state) {
  const int64_t impl = state.range(0);
  if (skip_unsupported(state, impl)) return;
  const size_t per_layer = static_cast<size_t>(k27b.n_v * k27b.dk * k27b.dv);
  const std::vector<float> initial = uniform(static_cast<int64_t>(per_layer) * kGdnLayers, -0.3f, 0.3f, 6);
  StreamedVector<float> states(initial.begin(), initial.end());  // huge pages, as the sequence state
  const Inputs in(k27b, 1);
  std::vector<float> out(static_cast<size_t>(k27b.n_v * k27b.dv));
  ThreadPool& pool = pool_of(state.range(1));
  int64_t layer = 0;
  for (auto _ : state) {
    float* s = states.data() + static_cast<size_t>(layer) * per_layer;
    if (impl == kRef) {
      ref::gdn_recurrent(out.data(), s, in.view(1), k27b);
    } else {
      gdn_recurrent(out.data(), s, in.view(1), k27b, &pool, kernels_of(impl));
    }
    benchmark::DoNotOptimize(out.data());
    layer = (layer + 1) % kGdnLayers;
  }
  state.counters["GB"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * static_cast<double>(per_layer * sizeof(float)) / 1e9,
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_GdnRecurrentStep)
    ->ArgsProduct({{kRef, kScalar, kAvx2, kAvx512}, {1, 2}})
    ->ArgNames({"impl", "threads"})
    ->Unit(benchmark::kMicrosecond);

// A prefill chunk of 64 tokens through one layer on one thread: the oracle's chunked form (C = 64) and
// recurrence, and the CPU kernels (the recurrence); args: impl, recurrent (for the oracle).
void BM_GdnPrefill(benchmark::State& state) {
  const int64_t impl = state.range(0);
  if (skip_unsupported(state, impl)) return;
  const bool ref_chunked = state.range(1) == 0;
  constexpr int64_t kTokens = 64;
  std::vector<float> s = uniform(k27b.n_v * k27b.dk * k27b.dv, -0.3f, 0.3f, 6);
  const Inputs in(k27b, kTokens);
  std::vector<float> out(static_cast<size_t>(kTokens * k27b.n_v * k27b.dv));
  std::vector<double> ref_scratch(ref::gdn_chunked_scratch_size(k27b, kTokens));
  for (auto _ : state) {
    if (impl == kRef && ref_chunked) {
      ref::gdn_chunked(out.data(), s.data(), in.view(kTokens), k27b, kTokens, ref_scratch);
    } else if (impl == kRef) {
      ref::gdn_recurrent(out.data(), s.data(), in.view(kTokens), k27b);
    } else {
      gdn_recurrent(out.data(), s.data(), in.view(kTokens), k27b, nullptr, kernels_of(impl));
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens);
}
BENCHMARK(BM_GdnPrefill)
    ->Args({kRef, 0})
    ->Args({kRef, 1})
    ->Args({kScalar, 1})
    ->Args({kAvx2, 1})
    ->Args({kAvx512, 1})
    ->ArgNames({"impl", "recurrent"})
    ->Unit(benchmark::kMillisecond);

// The other per-token GDN ops: conv over 10240 channels, the per-head L2 norms of q and k, the gated
// RMSNorm of the 48 output heads; arg 0: the oracle (kRef) or the CPU backend's (norms_cpu.h).
void BM_CausalConv(benchmark::State& state) {
  const bool oracle = state.range(0) == kRef;
  const int64_t n = state.range(1);
  const std::vector<float> in = uniform(n * kConvChannels, -1.0f, 1.0f, 1);
  const std::vector<float> weight = uniform(4 * kConvChannels, -1.0f, 1.0f, 2);
  std::vector<float> conv_state(3 * kConvChannels), out(in.size());
  const auto conv = oracle ? ref::causal_conv : cpu::causal_conv;
  for (auto _ : state) {
    conv(out.data(), in.data(), conv_state.data(), weight.data(), n, kConvChannels, 4);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(oracle ? "ref" : "cpu");
}
BENCHMARK(BM_CausalConv)->ArgsProduct({{kRef, kAvx2}, {1, 64}})->Unit(benchmark::kMicrosecond);

void BM_NormsOfOneToken(benchmark::State& state) {
  const bool oracle = state.range(0) == kRef;
  std::vector<float> qk = uniform(2 * k27b.n_k * k27b.dk, -1.0f, 1.0f, 1);
  const std::vector<float> o = uniform(k27b.n_v * k27b.dv, -1.0f, 1.0f, 2);
  const std::vector<float> z = uniform(k27b.n_v * k27b.dv, -1.0f, 1.0f, 3);
  const std::vector<float> gain = uniform(k27b.dv, 0.5f, 1.5f, 4);
  std::vector<float> y(o.size());
  const auto l2 = oracle ? ref::l2_norm : cpu::l2_norm;
  const auto gated = oracle ? ref::gated_rms_norm : cpu::gated_rms_norm;
  for (auto _ : state) {
    for (int64_t h = 0; h < 2 * k27b.n_k; ++h)
      l2(&qk[static_cast<size_t>(h * k27b.dk)], k27b.dk, ref::kL2NormEps);
    for (int64_t h = 0; h < k27b.n_v; ++h) {
      const size_t at = static_cast<size_t>(h * k27b.dv);
      gated(&y[at], &o[at], &z[at], gain.data(), k27b.dv, 1e-6f);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(oracle ? "ref" : "cpu");
}
BENCHMARK(BM_NormsOfOneToken)->Arg(kRef)->Arg(kAvx2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tern::kernels::cpu
