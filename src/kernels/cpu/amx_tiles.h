// AMX tile configuration shared by the *_amx.cpp files (compiled with -mamx-tile -mamx-int8); no other
// file includes it. A thread loads a configuration before its first tile instruction and releases the
// tile state when done, so a pool thread that later runs other kernels keeps no 8 KiB state live.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace tern::kernels::cpu::amx {

inline constexpr int kMaxTileRows = 16;
inline constexpr int kMaxTileBytes = 64;  // bytes per tile row

// The 64-byte palette-1 layout LDTILECFG reads.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t row_bytes[16] = {};
  uint8_t rows[16] = {};

  void set(int tile, int tile_rows, int bytes_per_row) {
    rows[tile] = static_cast<uint8_t>(tile_rows);
    row_bytes[tile] = static_cast<uint16_t>(bytes_per_row);
  }
};
static_assert(sizeof(TileConfig) == 64);

// Holds a tile configuration for one scope on the calling thread.
class TileScope {
 public:
  explicit TileScope(const TileConfig& config) { _tile_loadconfig(&config); }
  ~TileScope() { _tile_release(); }
  TileScope(const TileScope&) = delete;
  TileScope& operator=(const TileScope&) = delete;
};

}  // namespace tern::kernels::cpu::amx
