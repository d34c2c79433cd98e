#include "quant/trit_planes.h"

#include "core/error.h"

namespace tern::quant {

namespace {

constexpr int kBlock = 128;
constexpr int kHalfPositions = 32;
constexpr int kTritsPerCodeVector = 64;
constexpr int kLowPairSpan = 7;  // values of q

// Byte p of a code vector of half h holds this element of its block.
int element_at(int h, int p) {
  return 4 * (p % kHalfPositions) + 2 * h + p / kHalfPositions;
}

int64_t blocks_of(int64_t k) {
  if (k < 0 || k % kBlock != 0) fail(ErrorKind::kInput, "trit planes: {} values is not whole 128-blocks", k);
  return k / kBlock;
}

size_t scale_offset(int64_t k, int64_t b) {
  return static_cast<size_t>(trit_plane_sources(k) * kPlaneSourceBytes + 2 * b);
}

}  // namespace

int64_t trit_plane_sources(int64_t k) {
  return (kCodeVectorsPerBlock * blocks_of(k) + kSlotsPerByte - 1) / kSlotsPerByte;
}

size_t trit_planes_row_bytes(int64_t k) {
  return scale_offset(k, blocks_of(k));
}

uint8_t trit_plane_byte(const std::array<uint8_t, 5>& slots) {
  for (uint8_t t : slots) {
    if (t > 2) fail(ErrorKind::kInput, "trit planes: trit {} (must be 0..2)", t);
  }
  const int pair = 3 * slots[0] + slots[1];
  const int u = 9 * slots[2] + 3 * slots[3] + slots[4];  // = 2w + H, w = 2q + B
  const int w = u / 2;
  return static_cast<uint8_t>(128 * (u % 2) + 64 * (w % 2) + kLowPairSpan * pair + w / 2);
}

std::array<uint8_t, 5> trit_plane_slots(uint8_t byte) {
  const int low6 = byte & 63;
  const int pair = low6 / kLowPairSpan;
  const int u = 2 * (2 * (low6 % kLowPairSpan) + ((byte >> 6) & 1)) + (byte >> 7);
  return {static_cast<uint8_t>(pair / 3), static_cast<uint8_t>(pair % 3), static_cast<uint8_t>(u / 9),
          static_cast<uint8_t>(u / 3 % 3), static_cast<uint8_t>(u % 3)};
}

void trit_planes_store_row(uint8_t* row, int64_t k, const uint8_t* trits, const uint16_t* d_bits) {
  const int64_t blocks = blocks_of(k);
  const int64_t vectors = kCodeVectorsPerBlock * blocks;
  for (int64_t source = 0; source < trit_plane_sources(k); ++source) {
    for (int p = 0; p < kPlaneSourceBytes; ++p) {
      std::array<uint8_t, 5> slots{};
      for (int slot = 0; slot < kSlotsPerByte; ++slot) {
        const int64_t vector = kSlotsPerByte * source + slot;
        if (vector >= vectors) break;
        const int64_t block = vector / kCodeVectorsPerBlock;
        slots[slot] = trits[block * kBlock + element_at(static_cast<int>(vector % kCodeVectorsPerBlock), p)];
      }
      row[source * kPlaneSourceBytes + p] = trit_plane_byte(slots);
    }
  }
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* scale = row + scale_offset(k, b);
    scale[0] = static_cast<uint8_t>(d_bits[b] & 0xffu);
    scale[1] = static_cast<uint8_t>(d_bits[b] >> 8);
  }
}

void trit_planes_load_block(const uint8_t* row, int64_t k, int64_t b, uint8_t trits[128], uint16_t* d_bits) {
  for (int h = 0; h < kCodeVectorsPerBlock; ++h) {
    const int64_t vector = kCodeVectorsPerBlock * b + h;
    const uint8_t* source = row + vector / kSlotsPerByte * kPlaneSourceBytes;
    const int slot = static_cast<int>(vector % kSlotsPerByte);
    for (int p = 0; p < kTritsPerCodeVector; ++p) trits[element_at(h, p)] = trit_plane_slots(source[p])[slot];
  }
  const uint8_t* scale = row + scale_offset(k, b);
  *d_bits = static_cast<uint16_t>(scale[0] | (scale[1] << 8));
}

}  // namespace tern::quant
