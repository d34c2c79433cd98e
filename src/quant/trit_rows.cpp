#include "quant/trit_rows.h"

#include <algorithm>

#include "core/error.h"

namespace tern::quant {

namespace {

constexpr int kBlock = 128;
constexpr uint8_t kTopBit = 0x80;

int64_t blocks_of(int64_t k) {
  if (k < 0 || k % kBlock != 0) fail(ErrorKind::kInput, "trit rows: {} values is not whole 128-blocks", k);
  return k / kBlock;
}

// Element of block v / 4 that byte i of code vector v holds: field v % 4 of PQ2_0's qs byte i.
int element_at(int64_t v, int i) {
  return 4 * i + static_cast<int>(v % kTritRowVectorsPerBlock);
}

}  // namespace

int64_t trit_row_sources(int64_t k) {
  return (kTritRowVectorsPerBlock * blocks_of(k) + kTritRowSlots - 1) / kTritRowSlots;
}

size_t trit_rows_scale_offset(int64_t k, int64_t b) {
  return static_cast<size_t>(trit_row_sources(k) * kTritRowSourceBytes + 2 * b);
}

size_t trit_rows_row_bytes(int64_t k) {
  return trit_rows_scale_offset(k, blocks_of(k));
}

uint8_t trit_row_byte(const std::array<uint8_t, 5>& slots) {
  int v = 0;
  for (uint8_t t : slots) {
    if (t > 2) fail(ErrorKind::kInput, "trit rows: trit {} (must be 0..2)", t);
    v = 3 * v + t;
  }
  return static_cast<uint8_t>(((v * 256 + 242) / 243) ^ kTopBit);
}

std::array<uint8_t, 5> trit_row_slots(uint8_t byte) {
  std::array<uint8_t, 5> slots{};
  unsigned s = byte;
  for (uint8_t& t : slots) {
    const int as_signed = static_cast<int8_t>(static_cast<uint8_t>(s));
    t = static_cast<uint8_t>((as_signed > -43) + (as_signed > 42));
    s = (3 * s) & 0xffu;
  }
  return slots;
}

void trit_rows_store_row(uint8_t* row, int64_t k, const uint8_t* trits, const uint16_t* d_bits) {
  static const std::array<uint8_t, 243> byte_of = [] {
    std::array<uint8_t, 243> bytes{};
    for (int v = 0; v < 243; ++v) {
      bytes[static_cast<size_t>(v)] = trit_row_byte(
          {static_cast<uint8_t>(v / 81), static_cast<uint8_t>(v / 27 % 3), static_cast<uint8_t>(v / 9 % 3),
           static_cast<uint8_t>(v / 3 % 3), static_cast<uint8_t>(v % 3)});
    }
    return bytes;
  }();
  const int64_t blocks = blocks_of(k);
  const int64_t vectors = kTritRowVectorsPerBlock * blocks;
  const int64_t sources = trit_row_sources(k);
  uint8_t largest = 0;
  for (int64_t source = 0; source < sources; ++source) {
    std::array<uint8_t, kTritRowSourceBytes> v{};  // the bytes' slots so far, as base-3 numbers (< 243)
    for (int64_t vector = kTritRowSlots * source; vector < kTritRowSlots * (source + 1); ++vector) {
      if (vector >= vectors) {  // past the last code vector: trit 0
        for (uint8_t& digits : v) digits = static_cast<uint8_t>(3 * digits);
        continue;
      }
      const uint8_t* field =
          trits + vector / kTritRowVectorsPerBlock * kBlock + vector % kTritRowVectorsPerBlock;
      for (size_t i = 0; i < v.size(); ++i) {
        const uint8_t t = field[4 * i];
        largest = std::max(largest, t);
        v[i] = static_cast<uint8_t>(3 * v[i] + std::min<uint8_t>(t, 2));
      }
    }
    for (size_t i = 0; i < v.size(); ++i)
      row[source * kTritRowSourceBytes + static_cast<int64_t>(i)] = byte_of[v[i]];
  }
  if (largest > 2) fail(ErrorKind::kInput, "trit rows: trit {} (must be 0..2)", largest);
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* scale = row + trit_rows_scale_offset(k, b);
    scale[0] = static_cast<uint8_t>(d_bits[b] & 0xffu);
    scale[1] = static_cast<uint8_t>(d_bits[b] >> 8);
  }
}

void trit_rows_load_block(const uint8_t* row, int64_t k, int64_t b, uint8_t trits[128], uint16_t* d_bits) {
  for (int64_t f = 0; f < kTritRowVectorsPerBlock; ++f) {
    const int64_t v = kTritRowVectorsPerBlock * b + f;
    const uint8_t* source = row + v / kTritRowSlots * kTritRowSourceBytes;
    for (int i = 0; i < kTritRowSourceBytes; ++i)
      trits[element_at(v, i)] = trit_row_slots(source[i])[v % kTritRowSlots];
  }
  const uint8_t* scale = row + trit_rows_scale_offset(k, b);
  *d_bits = static_cast<uint16_t>(scale[0] | (scale[1] << 8));
}

}  // namespace tern::quant
