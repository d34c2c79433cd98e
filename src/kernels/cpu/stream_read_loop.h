// The stream pattern's loop (stream_read.h), shared by the ISA files: Sum::add(q) adds the kStreamStep
// bytes at q, Sum::total() returns the sum. Included only by stream_read_*.cpp and bandwidth.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/stream_read.h"

namespace tern::kernels::cpu {

template <class Sum>
uint64_t stream_sum_loop(const uint8_t* p, size_t bytes, StreamPattern pattern) {
  const auto streams = static_cast<size_t>(pattern.streams < 1 ? 1 : pattern.streams);
  const size_t part = bytes / streams / kStreamStep * kStreamStep;
  Sum sum;
  for (size_t i = 0; i < part; i += kStreamStep) {
    for (size_t s = 0; s < streams; ++s) {
      const uint8_t* q = p + s * part + i;
      if (pattern.prefetch) {
        __builtin_prefetch(q + kStreamPrefetchBytes, 0, 3);
        __builtin_prefetch(q + kStreamPrefetchBytes + 64, 0, 3);
      }
      sum.add(q);
    }
  }
  for (size_t i = streams * part; i < bytes; i += kStreamStep) sum.add(p + i);
  return sum.total();
}

}  // namespace tern::kernels::cpu
