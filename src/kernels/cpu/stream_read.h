// The inner loops of measure_read_bandwidth_gbs (bandwidth.h), each in its own ISA's translation unit.
// The widest loads stream fastest: with fewer instructions per line the core keeps more lines in flight
// (on the project machine a scalar-sum loop read ≈ 18 GB/s on two threads, 256-bit loads ≈ 22, 512-bit
// ≈ 25). Each loop sums 64-bit words so the reads cannot be dropped, optionally requesting the line
// kStreamPrefetchBytes ahead; the probe keeps whichever of the two reads faster.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern::kernels::cpu {

inline constexpr size_t kStreamPrefetchBytes = 2048;

// Sum of the 64-bit words of [p, p + bytes); p 64-byte aligned, bytes a multiple of 128. Needs AVX2.
uint64_t stream_sum_avx2(const uint8_t* p, size_t bytes, bool prefetch);
// The same with 512-bit loads. Needs AVX-512 F.
uint64_t stream_sum_avx512(const uint8_t* p, size_t bytes, bool prefetch);

using StreamSum = uint64_t (*)(const uint8_t* p, size_t bytes, bool prefetch);
// The widest of the loops this CPU runs (a scalar one without AVX2).
StreamSum stream_sum_kernel();

}  // namespace tern::kernels::cpu
