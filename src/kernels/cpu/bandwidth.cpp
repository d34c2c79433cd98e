#include "kernels/cpu/bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <vector>

#include "core/cpu_features.h"
#include "core/huge_pages.h"
#include "core/thread_pool.h"
#include "kernels/cpu/dot_peak.h"
#include "kernels/cpu/stream_read.h"
#include "kernels/cpu/stream_read_loop.h"

namespace tern::kernels::cpu {

namespace {

// The probes publish their sums here so the compiler cannot drop the reads.
std::atomic<uint64_t> probe_sink{0};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The loop without vector loads: four independent sums, so it is load-bound, not add-latency-bound.
struct ScalarSum {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  void add(const uint8_t* q) {
    const auto* words = reinterpret_cast<const uint64_t*>(q);
    for (size_t i = 0; i < kStreamStep / sizeof(uint64_t); i += 4) {
      s0 += words[i];
      s1 += words[i + 1];
      s2 += words[i + 2];
      s3 += words[i + 3];
    }
  }
  uint64_t total() const { return s0 + s1 + s2 + s3; }
};

// The patterns the probe tries, in rounds of one pass each.
constexpr StreamPattern kPatterns[] = {{1, false}, {1, true}, {4, false}, {8, false}, {16, false}};
// Memory reads slowly after a pause and needs a while of steady load to reach its rate: on the Zen 5
// host (12-02) successive 20 ms passes from idle read 9, 42, 43, 53, 47, 58 GB/s, then 54-64. One
// warm-up pass and ten timed ones (≈ 0.3 s in all) read 40-44 GB/s while the 27B decode, streaming
// for seconds, read 47. So the probe streams for a while before it times, and then times rounds for
// a while, so that a neighbour's burst on a shared host does not decide the figure.
// A pass streams the next of the equal windows, of at most kPassBytes, the buffer is split into, so passes
// stay short and many (the best of them is kept) while a byte is read again only after the whole buffer,
// which no cache holds.
constexpr size_t kPassBytes = size_t{1} << 30;
constexpr double kWarmUpSeconds = 0.3;
constexpr double kTimedSeconds = 1.0;
constexpr int kMinRounds = 2;

}  // namespace

uint64_t stream_sum_scalar(const uint8_t* p, size_t bytes, StreamPattern pattern) {
  return stream_sum_loop<ScalarSum>(p, bytes, pattern);
}

StreamSum stream_sum_kernel() {
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx2_fma() && cpu.avx512f) return stream_sum_avx512;
  if (cpu.has_avx2_fma()) return stream_sum_avx2;
#elif defined(__aarch64__)
  if (cpu_features().neon) return stream_sum_neon;
#endif
  return stream_sum_scalar;
}

void stream_read(const uint8_t* p, size_t bytes, StreamPattern pattern) {
  static const StreamSum stream_sum = stream_sum_kernel();
  probe_sink.fetch_add(stream_sum(p, bytes, pattern), std::memory_order_relaxed);
}

ReadBandwidth measure_read_bandwidth(ThreadPool& pool, size_t bytes) {
  const auto threads = static_cast<size_t>(pool.size());
  const size_t windows = std::max<size_t>((bytes + kPassBytes - 1) / kPassBytes, 1);
  const size_t part = std::max<size_t>(bytes / windows / threads / kStreamStep, 1) * kStreamStep;
  const size_t window = part * threads;
  // Huge pages, as the placed weights use (model::WeightPlacement): the probe measures what the machine
  // streams at best, not what a 4 KiB page walk allows.
  const HugePageBuffer memory = HugePageBuffer::allocate(window * windows, "bandwidth probe");
  std::memset(memory.data(), 1, window * windows);  // back every page before timing
  size_t next_window = 0;
  const auto pass_gbs = [&](StreamPattern pattern) {
    const uint8_t* buffer = memory.data() + next_window * window;
    next_window = (next_window + 1) % windows;
    const auto start = std::chrono::steady_clock::now();
    pool.for_each(static_cast<int64_t>(threads), [&](int64_t t, int) {
      stream_read(buffer + static_cast<size_t>(t) * part, part, pattern);
    });
    return static_cast<double>(window) / seconds_since(start) / 1e9;
  };
  for (const auto warm_up = std::chrono::steady_clock::now(); seconds_since(warm_up) < kWarmUpSeconds;) {
    pass_gbs(kPatterns[0]);
  }
  constexpr size_t kPatternCount = std::size(kPatterns);
  std::vector<double> passes[kPatternCount];
  const auto timed = std::chrono::steady_clock::now();
  for (int round = 0; round < kMinRounds || seconds_since(timed) < kTimedSeconds; ++round) {
    for (size_t p = 0; p < kPatternCount; ++p) passes[p].push_back(pass_gbs(kPatterns[p]));
  }
  ReadBandwidth out{.bytes = window * windows};
  for (std::vector<double>& rates : passes) {
    std::sort(rates.begin(), rates.end());
    out.best_gb_s = std::max(out.best_gb_s, rates.back());
    out.median_gb_s = std::max(out.median_gb_s, rates[rates.size() / 2]);
  }
  return out;
}

namespace {

struct DotChains {
  int64_t (*run)(int64_t iterations) = nullptr;
  int64_t macs_per_iteration = 0;
};

// The int8 dot-product loop of the widest ISA this CPU has (run is null where it has none).
DotChains dot_chains() {
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.has_avx512_vnni()) return {int8_dot_chains_avx512, kDotChainMacsAvx512};
  if (cpu.has_avx_vnni()) return {int8_dot_chains_avxvnni, kDotChainMacsAvxVnni};
  if (cpu.has_avx2_fma()) return {int8_dot_chains_avx2, kDotChainMacs};
#elif defined(__aarch64__)
  if (cpu.dotprod) return {int8_dot_chains_dotprod, kDotChainMacsDotprod};
  if (cpu.neon) return {int8_dot_chains_neon, kDotChainMacsNeon};
#endif
  (void)cpu;
  return {};
}

}  // namespace

double measure_int8_dot_gmacs(ThreadPool& pool) {
  const DotChains chains = dot_chains();
  if (chains.run == nullptr) return 0.0;
  constexpr int64_t kIterations = 20'000'000;
  const int threads = pool.size();
  double best = 0.0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.for_each(threads, [&](int64_t, int) {
      const int64_t sink = chains.run(kIterations);
      probe_sink.fetch_add(static_cast<uint64_t>(sink), std::memory_order_relaxed);
    });
    const double macs = static_cast<double>(threads) * static_cast<double>(kIterations) *
                        static_cast<double>(chains.macs_per_iteration);
    best = std::max(best, macs / seconds_since(start) / 1e9);
  }
  return best;
}

}  // namespace tern::kernels::cpu
