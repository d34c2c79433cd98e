// Decode attention on the 27B shape (24 query heads over 4 KV heads of 256, model-spec §5.3): one
// query row against n_keys cached positions, fp16 and q8 caches, for the oracle and the cpu kernels
// (scalar, AVX2, AVX-512, the dispatched kernel with the heads over a pool of 2), and the dispatched kernel
// on a cache that stays in L2. Rates count the cache bytes read per call.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/huge_pages.h"
#include "core/thread_pool.h"
#include "kernels/cpu/attention_cpu.h"
#include "runtime/sequence_state.h"

namespace tern::kernels::cpu {
namespace {

constexpr int64_t kHeads = 24, kKvHeads = 4, kHeadDim = 256;

// Bytes of cache read per call, and how many calls' worth of distinct caches a run cycles through: at
// least 512 MB (the 16 attention layers of the 27B at 8k), beyond the 300 MB L3 of the machine this was
// tuned on, so each call streams its keys and values from memory as decode does.
int64_t cache_bytes(ref::KvPrecision precision, int64_t n_keys) {
  return 2 * n_keys * kKvHeads * static_cast<int64_t>(runtime::kv_head_bytes(precision, kHeadDim));
}
constexpr int64_t kCycledBytes = int64_t{512} << 20;

// Random keys and values of n_keys positions, stored at one precision, in `copies` distinct copies, in
// the memory the sequence state uses (huge pages).
struct DecodeCache {
  StreamedVector<uint16_t> k16, v16;
  StreamedVector<int8_t> k8, v8;
  StreamedVector<float> k_scales, v_scales;
  std::vector<ref::KvView> views;

  DecodeCache(ref::KvPrecision precision, int64_t n_keys, int64_t cycled_bytes = kCycledBytes) {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    const int64_t copies = std::max<int64_t>(
        1, (cycled_bytes + cache_bytes(precision, n_keys) - 1) / cache_bytes(precision, n_keys));
    const int64_t rows = ref::kv_rows(n_keys, kKvHeads);
    const int64_t groups = ref::q8_groups(kHeadDim);
    const auto values = static_cast<size_t>(rows * kHeadDim);
    std::vector<float> k(values), v(values);
    ref::KvView view;
    view.precision = precision;
    view.n_kv = kKvHeads;
    view.head_dim = kHeadDim;
    if (precision == ref::KvPrecision::kQ8) {
      k8.resize(values * copies);
      v8.resize(values * copies);
      k_scales.resize(static_cast<size_t>(rows * groups * copies));
      v_scales.resize(k_scales.size());
    } else {
      k16.resize(values * copies);
      v16.resize(values * copies);
    }
    // One set of random rows, copied: only the addresses need to differ.
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    for (int64_t c = 0; c < copies; ++c) {
      if (precision == ref::KvPrecision::kQ8) {
        const int64_t first = c * rows;
        for (int64_t r = first; r < first + rows; ++r) {
          const int64_t source = (r - first) * kHeadDim;
          ref::quantize_q8_head(&k[source], kHeadDim, &k8[r * kHeadDim], &k_scales[r * groups]);
          ref::quantize_q8_head(&v[source], kHeadDim, &v8[r * kHeadDim], &v_scales[r * groups]);
        }
        view.k = &k8[first * kHeadDim];
        view.v = &v8[first * kHeadDim];
        view.k_scales = &k_scales[first * groups];
        view.v_scales = &v_scales[first * groups];
      } else {
        const size_t first = values * c;
        for (size_t i = 0; i < values; ++i)
          k16[first + i] = fp32_to_fp16(k[i]), v16[first + i] = fp32_to_fp16(v[i]);
        view.k = &k16[first];
        view.v = &v16[first];
      }
      views.push_back(view);
    }
  }
};

// range(0): n_keys; range(1): 0 f16, 1 q8; range(2): 0 oracle, 1 scalar, 2 AVX2, 3 AVX-512, 4 the
// dispatched kernel with 2 threads.
void BM_DecodeAttention(benchmark::State& state) {
  const int64_t n_keys = state.range(0);
  const auto precision = state.range(1) == 0 ? ref::KvPrecision::kF16 : ref::KvPrecision::kQ8;
  const int64_t variant = state.range(2);
#if defined(__x86_64__)
  const bool supported =
      (variant != 2 || cpu_features().has_avx2_fma()) && (variant != 3 || attention_avx512_supported());
#else
  const bool supported = variant != 2 && variant != 3;
#endif
  if (!supported) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const DecodeCache cache(precision, n_keys);
  std::vector<float> q(kHeads * kHeadDim, 0.05f), out(q.size());
  ThreadPool pool(2);
  const float scale = 0.0625f;
  size_t call = 0;
  for (auto _ : state) {
    const ref::KvView& view = cache.views[call++ % cache.views.size()];
    switch (variant) {
      case 0:
        ref::attention(out.data(), q.data(), view, n_keys, kHeads, scale);
        break;
      case 1:
        attention(out.data(), q.data(), view, n_keys, kHeads, scale, nullptr, attention_head_scalar);
        break;
#if defined(__x86_64__)
      case 2:
        attention(out.data(), q.data(), view, n_keys, kHeads, scale, nullptr, attention_head_avx2);
        break;
      case 3:
        attention(out.data(), q.data(), view, n_keys, kHeads, scale, nullptr, attention_head_avx512);
        break;
#endif
      default:
        attention(out.data(), q.data(), view, n_keys, kHeads, scale, &pool);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * cache_bytes(precision, n_keys));
}

void DecodeAttentionArgs(benchmark::internal::Benchmark* b) {
  // The 27B at depth 1k, 8k and 32k; the oracle and the scalar kernel only at 1k (they take seconds).
  for (int64_t keys : {1024, 8192, 32768})
    for (int64_t precision : {0, 1})
      for (int64_t variant : {0, 1, 2, 3, 4})
        if (keys == 1024 || variant >= 2) b->Args({keys, precision, variant});
}

BENCHMARK(BM_DecodeAttention)->Apply(DecodeAttentionArgs)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The x86 head kernel `variant` names (2 AVX2, 3 AVX-512), or null where this CPU or build lacks it.
AttentionHeadKernel x86_head_kernel([[maybe_unused]] int64_t variant) {
#if defined(__x86_64__)
  if (variant == 2 && cpu_features().has_avx2_fma()) return attention_head_avx2;
  if (variant == 3 && attention_avx512_supported()) return attention_head_avx512;
#endif
  return nullptr;
}

// A head kernel on one thread over 128 positions (512 KiB at fp16) read again and again from L2: its
// arithmetic, without the memory's speed or the pool. range(0): 0 f16, 1 q8; range(1): 2 AVX2, 3 AVX-512.
void BM_DecodeAttentionHot(benchmark::State& state) {
  const int64_t n_keys = 128;
  const auto precision = state.range(0) == 0 ? ref::KvPrecision::kF16 : ref::KvPrecision::kQ8;
  const AttentionHeadKernel kernel = x86_head_kernel(state.range(1));
  if (kernel == nullptr) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const DecodeCache cache(precision, n_keys, 0);
  std::vector<float> q(kHeads * kHeadDim, 0.05f), out(q.size());
  for (auto _ : state) {
    attention(out.data(), q.data(), cache.views[0], n_keys, kHeads, 0.0625f, nullptr, kernel);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * cache_bytes(precision, n_keys));
}

BENCHMARK(BM_DecodeAttentionHot)->ArgsProduct({{0, 1}, {2, 3}})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tern::kernels::cpu
