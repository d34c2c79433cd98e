// The inner loops of measure_read_bandwidth (bandwidth.h), each in its own ISA's translation unit.
// The widest loads stream fastest: with fewer instructions per line the core keeps more lines in flight
// (on the project machine a scalar-sum loop read ≈ 18 GB/s on two threads, 256-bit loads ≈ 22, 512-bit
// ≈ 25). So do several streams at once: one thread reading one address stream leaves the hardware
// prefetchers a single stream to run ahead on, while 4–16 interleaved ones keep more lines in flight
// (11-30, two threads: one stream 17–25 GB/s, eight 26–30 in the same probe runs; a standalone loop
// read 23–33 against 30–42). Each loop sums 64-bit words so the reads cannot be dropped; the probe
// keeps whichever pattern reads fastest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern::kernels::cpu {

inline constexpr size_t kStreamPrefetchBytes = 2048;
inline constexpr size_t kStreamStep = 128;  // bytes each stream advances per step

// How a range is read: split into `streams` equal parts (multiples of kStreamStep) read round-robin,
// kStreamStep bytes of each part per step, then the tail; with `prefetch`, each stream also requests
// the line kStreamPrefetchBytes ahead.
struct StreamPattern {
  int streams = 1;
  bool prefetch = false;
};

// Sum of the 64-bit words of [p, p + bytes); p 64-byte aligned, bytes a multiple of kStreamStep. Any CPU.
uint64_t stream_sum_scalar(const uint8_t* p, size_t bytes, StreamPattern pattern);
// The same with 256-bit loads. Needs AVX2.
uint64_t stream_sum_avx2(const uint8_t* p, size_t bytes, StreamPattern pattern);
// The same with 512-bit loads. Needs AVX-512 F.
uint64_t stream_sum_avx512(const uint8_t* p, size_t bytes, StreamPattern pattern);
// The same with 128-bit NEON loads. AArch64.
uint64_t stream_sum_neon(const uint8_t* p, size_t bytes, StreamPattern pattern);

using StreamSum = uint64_t (*)(const uint8_t* p, size_t bytes, StreamPattern pattern);
// The widest of the loops this CPU runs (a scalar one without AVX2 or NEON).
StreamSum stream_sum_kernel();

// Reads [p, p + bytes) with stream_sum_kernel()'s loop and keeps the sum where the compiler cannot
// drop the reads (the probes' sink). Same preconditions as the loops.
void stream_read(const uint8_t* p, size_t bytes, StreamPattern pattern);

}  // namespace tern::kernels::cpu
