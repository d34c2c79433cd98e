// Decode attention on the 27B shape (24 query heads over 4 KV heads of 256, model-spec §5.3): one
// query row against n_keys cached positions, fp16 and q8 caches, for the oracle and the cpu kernels
// (scalar, AVX2, AVX-512, the dispatched kernel with the heads over a pool of 2). Rates count the cache bytes
// read per call.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/attention_cpu.h"
#include "runtime/sequence_state.h"

namespace tern::kernels::cpu {
namespace {

constexpr int64_t kHeads = 24, kKvHeads = 4, kHeadDim = 256;

struct DecodeCache {
  std::vector<uint16_t> k16, v16;
  std::vector<int8_t> k8, v8;
  std::vector<float> k_scales, v_scales;
  ref::KvView view;

  DecodeCache(ref::KvPrecision precision, int64_t n_keys) {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    const int64_t rows = n_keys * kKvHeads;
    const int64_t groups = ref::q8_groups(kHeadDim);
    std::vector<float> k(static_cast<size_t>(rows * kHeadDim)), v(k.size());
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    view.precision = precision;
    view.n_kv = kKvHeads;
    view.head_dim = kHeadDim;
    if (precision == ref::KvPrecision::kQ8) {
      k8.resize(k.size());
      v8.resize(v.size());
      k_scales.resize(static_cast<size_t>(rows * groups));
      v_scales.resize(k_scales.size());
      for (int64_t r = 0; r < rows; ++r) {
        ref::quantize_q8_head(&k[r * kHeadDim], kHeadDim, &k8[r * kHeadDim], &k_scales[r * groups]);
        ref::quantize_q8_head(&v[r * kHeadDim], kHeadDim, &v8[r * kHeadDim], &v_scales[r * groups]);
      }
      view.k = k8.data();
      view.v = v8.data();
      view.k_scales = k_scales.data();
      view.v_scales = v_scales.data();
    } else {
      for (float x : k) k16.push_back(fp32_to_fp16(x));
      for (float x : v) v16.push_back(fp32_to_fp16(x));
      view.k = k16.data();
      view.v = v16.data();
    }
  }
};

// range(0): n_keys; range(1): 0 f16, 1 q8; range(2): 0 oracle, 1 scalar, 2 AVX2, 3 AVX-512, 4 the
// dispatched kernel with 2 threads.
void BM_DecodeAttention(benchmark::State& state) {
  const int64_t n_keys = state.range(0);
  const auto precision = state.range(1) == 0 ? ref::KvPrecision::kF16 : ref::KvPrecision::kQ8;
  const int64_t variant = state.range(2);
  if ((variant == 2 && !cpu_features().has_avx2_fma()) || (variant == 3 && !attention_avx512_supported())) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const DecodeCache cache(precision, n_keys);
  std::vector<float> q(kHeads * kHeadDim, 0.05f), out(q.size());
  ThreadPool pool(2);
  const float scale = 0.0625f;
  for (auto _ : state) {
    switch (variant) {
      case 0:
        ref::attention(out.data(), q.data(), cache.view, n_keys, kHeads, scale);
        break;
      case 1:
        attention(out.data(), q.data(), cache.view, n_keys, kHeads, scale, nullptr, attention_head_scalar);
        break;
      case 2:
        attention(out.data(), q.data(), cache.view, n_keys, kHeads, scale, nullptr, attention_head_avx2);
        break;
      case 3:
        attention(out.data(), q.data(), cache.view, n_keys, kHeads, scale, nullptr, attention_head_avx512);
        break;
      default:
        attention(out.data(), q.data(), cache.view, n_keys, kHeads, scale, &pool);
    }
    benchmark::DoNotOptimize(out.data());
  }
  const auto bytes =
      2 * n_keys * kKvHeads * static_cast<int64_t>(runtime::kv_head_bytes(precision, kHeadDim));
  state.SetBytesProcessed(state.iterations() * bytes);
}

void DecodeAttentionArgs(benchmark::internal::Benchmark* b) {
  // The 27B at depth 1k, 8k and 32k; the oracle and the scalar kernel only at 1k (they take seconds).
  for (int64_t keys : {256, 1024, 8192, 32768})
    for (int64_t precision : {0, 1})
      for (int64_t variant : {0, 1, 2, 3, 4})
        if (keys <= 1024 || variant >= 2) b->Args({keys, precision, variant});
}

BENCHMARK(BM_DecodeAttention)->Apply(DecodeAttentionArgs)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace tern::kernels::cpu
