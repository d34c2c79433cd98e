#include "quant/types.h"

#include <array>
#include <limits>

#include "core/error.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"
#include "quant/trit_planes.h"
#include "quant/trit_rows.h"

namespace tern::quant {
namespace {

// Trit planes' and trit rows' block_bytes is the scale's 2 bytes plus 25.6 of trits, rounded up.
constexpr std::array<TypeTraits, 10> kTraits{{
    {TensorType::kF32, "f32", 1, 4, false, true},
    {TensorType::kF16, "f16", 1, 2, false, true},
    {TensorType::kBF16, "bf16", 1, 2, false, true},
    {TensorType::kQ2_0, "q2_0", 64, 18, true, true},
    {TensorType::kPQ2_0, "pq2_0", 128, 34, true, true},
    {TensorType::kPTQ1_0, "ptq1_0", 128, 28, true, true},
    {TensorType::kTritPlanes, "trit_planes", 128, 28, true, false},
    {TensorType::kPq2Panels, "pq2_panels", 128, 34, true, false},
    {TensorType::kTritPanels, "trit_panels", 128, 28, true, false},
    {TensorType::kTritRows, "trit_rows", 128, 28, true, false},
}};

}  // namespace

std::optional<TensorType> type_from_id(uint32_t id) {
  for (const auto& t : kTraits) {
    if (t.in_files && static_cast<uint32_t>(t.type) == id) return t.type;
  }
  return std::nullopt;
}

std::optional<TensorType> type_from_name(std::string_view name) {
  for (const auto& t : kTraits) {
    if (t.in_files && t.name == name) return t.type;
  }
  return std::nullopt;
}

const TypeTraits& traits(TensorType type) {
  for (const auto& t : kTraits) {
    if (t.type == type) return t;
  }
  fail(ErrorKind::kInternal, "unknown tensor type id {}", static_cast<uint32_t>(type));
}

std::optional<size_t> row_bytes(TensorType type, int64_t k) {
  const TypeTraits& t = traits(type);
  if (k < 0 || k % t.block_elems != 0) return std::nullopt;
  if (type == TensorType::kTritPlanes) return trit_planes_row_bytes(k);
  if (type == TensorType::kTritRows) return trit_rows_row_bytes(k);
  if (type == TensorType::kTritPanels) return trit_panels_row_bytes(k);
  const uint64_t blocks = static_cast<uint64_t>(k / t.block_elems);
  if (blocks > std::numeric_limits<uint64_t>::max() / t.block_bytes) return std::nullopt;
  return static_cast<size_t>(blocks * t.block_bytes);
}

std::optional<size_t> matrix_bytes(TensorType type, int64_t rows, int64_t k) {
  const std::optional<size_t> one_row = row_bytes(type, k);
  if (!one_row || rows < 0) return std::nullopt;
  if (type == TensorType::kPq2Panels) return pq2_panels_bytes(rows, k);
  if (type == TensorType::kTritPanels) return trit_panels_bytes(rows, k);
  return *one_row * static_cast<size_t>(rows);
}

}  // namespace tern::quant
