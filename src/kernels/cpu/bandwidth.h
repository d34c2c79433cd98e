// Machine probes for the roofline `tern bench` reports: streaming DRAM read bandwidth and the int8 dot
// throughput the ternary kernels are built from.
#pragma once

#include <cstddef>

namespace tern {
class ThreadPool;
}

namespace tern::kernels::cpu {

// Streams a buffer of `bytes` (many times the last-level cache, so that no cache holds part of it:
// tools::default_bandwidth_bytes), a window of at most 1 GiB a pass split evenly over the pool's threads,
// with the widest vector loads the CPU has, passes cycling through one stream (with and without a software
// prefetch) and 4, 8 and 16 interleaved streams a thread (stream_read.h); the best pass of about a second of
// rounds after about 0.3 s of warm-up, in GB/s (1e9 bytes per second), and the median pass of the pattern
// whose median is highest: on a shared host the two differ by what neighbours take, which the best pass
// hides.
struct ReadBandwidth {
  size_t bytes = 0;  // the buffer streamed: `bytes` rounded down to equal windows of whole stream steps
  double best_gb_s = 0.0;
  double median_gb_s = 0.0;
};
ReadBandwidth measure_read_bandwidth(ThreadPool& pool, size_t bytes);

// In-cache int8 multiply-accumulate rate on every pool thread, in G MAC/s: eight independent chains
// of the widest int8 product the CPU has (dot_peak.h): AVX-512 VNNI dpbusd, else AVX2 maddubs (u8 x s8)
// each followed by the int16 add that accumulates it; on AArch64 SDOT, else NEON smlal; 0 without any.
double measure_int8_dot_gmacs(ThreadPool& pool);

}  // namespace tern::kernels::cpu
