#include "kernels/cpu/bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/cpu_features.h"
#include "core/huge_pages.h"
#include "core/thread_pool.h"
#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

namespace {

constexpr int kPasses = 5;

// The probes publish their sums here so the compiler cannot drop the reads.
std::atomic<uint64_t> probe_sink{0};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Four independent sums so the loop is load-bound, not add-latency-bound.
uint64_t sum_words(const uint64_t* p, size_t n) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  for (; i < n; ++i) s0 += p[i];
  return s0 + s1 + s2 + s3;
}

}  // namespace

double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes) {
  const size_t words = std::max<size_t>(bytes / sizeof(uint64_t), 1);
  // Huge pages, as the placed weights use (model::WeightPlacement): the probe measures what the machine
  // streams at best, not what a 4 KiB page walk allows.
  const HugePageBuffer memory = HugePageBuffer::allocate(words * sizeof(uint64_t), "bandwidth probe");
  std::memset(memory.data(), 1, words * sizeof(uint64_t));  // back every page before timing
  const auto* buffer = reinterpret_cast<const uint64_t*>(memory.data());
  const int threads = pool.size();
  double best = 0.0;
  for (int pass = 0; pass <= kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.for_each(threads, [&](int64_t part, int) {
      const size_t begin = words * static_cast<size_t>(part) / static_cast<size_t>(threads);
      const size_t end = words * static_cast<size_t>(part + 1) / static_cast<size_t>(threads);
      probe_sink.fetch_add(sum_words(buffer + begin, end - begin), std::memory_order_relaxed);
    });
    const double gbs = static_cast<double>(words * sizeof(uint64_t)) / seconds_since(start) / 1e9;
    if (pass > 0) best = std::max(best, gbs);  // pass 0 warms clocks and TLBs
  }
  return best;
}

double measure_int8_dot_gmacs(ThreadPool& pool) {
  if (!cpu_features().has_avx2_fma()) return 0.0;
  const bool vnni = cpu_features().has_avx512_vnni();
  const int64_t macs_per_iteration = vnni ? kDotChainMacsAvx512 : kDotChainMacs;
  constexpr int64_t kIterations = 20'000'000;
  const int threads = pool.size();
  double best = 0.0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.for_each(threads, [&](int64_t, int) {
      const int64_t sink = vnni ? int8_dot_chains_avx512(kIterations) : int8_dot_chains_avx2(kIterations);
      probe_sink.fetch_add(static_cast<uint64_t>(sink), std::memory_order_relaxed);
    });
    const double macs = static_cast<double>(threads) * static_cast<double>(kIterations) *
                        static_cast<double>(macs_per_iteration);
    best = std::max(best, macs / seconds_since(start) / 1e9);
  }
  return best;
}

}  // namespace tern::kernels::cpu
