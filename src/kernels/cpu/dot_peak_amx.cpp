#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/dot_peak.h"

namespace tern::kernels::cpu {

int64_t int8_dot_tiles_amx(int64_t iterations, int k_bytes) {
  // Four independent accumulators C[i][j] += A[i] · B[j] (tiles 0..3 = C, 4..5 = A, 6..7 = B), so each
  // TDPBSSD waits on nothing but the unit; operands stay in tiles.
  amx::TileConfig config;
  for (int c = 0; c < 4; ++c) config.set(c, amx::kMaxTileRows, amx::kMaxTileBytes);
  for (int a = 4; a < 6; ++a) config.set(a, amx::kMaxTileRows, k_bytes);
  for (int b = 6; b < 8; ++b) config.set(b, k_bytes / 4, amx::kMaxTileBytes);
  amx::TileScope scope(config);
  alignas(64) int8_t operand[amx::kMaxTileRows * amx::kMaxTileBytes];
  for (int i = 0; i < amx::kMaxTileRows * amx::kMaxTileBytes; ++i)
    operand[i] = static_cast<int8_t>(i % 7 - 3);
  _tile_loadd(4, operand, amx::kMaxTileBytes);
  _tile_loadd(5, operand, amx::kMaxTileBytes);
  _tile_loadd(6, operand, amx::kMaxTileBytes);
  _tile_loadd(7, operand, amx::kMaxTileBytes);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t i = 0; i < iterations; ++i) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    _tile_dpbssd(2, 5, 6);
    _tile_dpbssd(3, 5, 7);
  }
  alignas(64) int32_t out[amx::kMaxTileRows * amx::kMaxTileBytes / 4];
  _tile_stored(0, out, amx::kMaxTileBytes);
  int64_t sink = 0;
  for (int32_t v : out) sink += v;
  return sink;
}

}  // namespace tern::kernels::cpu
