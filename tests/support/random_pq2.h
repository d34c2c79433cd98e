// Seeded random PQ2_0 rows for the kernel tests that compare kernels bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"

namespace tern::testing_support {

// `rows` PQ2_0 rows of `cols` values (cols a multiple of 128): every byte random, so every code 0..3
// (3, the +2·d code, included), and fp16 scales of both signs between 0.005 and 0.05.
inline std::vector<uint8_t> random_pq2_rows(int64_t rows, int64_t cols, uint32_t seed) {
  constexpr size_t kBlockBytes = 34;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.005f, 0.05f);
  std::vector<uint8_t> bytes(static_cast<size_t>(cols / 128) * kBlockBytes * static_cast<size_t>(rows));
  for (size_t at = 0; at < bytes.size(); at += kBlockBytes) {
    const uint16_t d = fp32_to_fp16((rng() % 2 ? 1.0f : -1.0f) * scale(rng));
    std::memcpy(&bytes[at], &d, 2);
    for (size_t i = 2; i < kBlockBytes; ++i) bytes[at + i] = static_cast<uint8_t>(rng());
  }
  return bytes;
}

// The same with every code a trit (0..2): the rows a PTQ1_0 file transcodes to, which trit forms hold.
inline std::vector<uint8_t> random_trit_pq2_rows(int64_t rows, int64_t cols, uint32_t seed) {
  constexpr size_t kBlockBytes = 34;
  std::vector<uint8_t> bytes = random_pq2_rows(rows, cols, seed);
  std::mt19937 rng(seed ^ 0x5eedu);
  for (size_t at = 0; at < bytes.size(); at += kBlockBytes) {
    for (size_t i = 2; i < kBlockBytes; ++i) {
      bytes[at + i] = static_cast<uint8_t>(rng() % 3 | rng() % 3 << 2 | rng() % 3 << 4 | rng() % 3 << 6);
    }
  }
  return bytes;
}

}  // namespace tern::testing_support
