// Tensor element types tern reads and writes, and their block geometry (model-spec §3.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tern::quant {

// Values are the ggml type ids stored in GGUF tensor infos.
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ2_0 = 42,  // mainline Q2_0: group 64, {fp16 d; u8 qs[16]}
  kBF16 = 30,
  kPQ2_0 = 142,   // Prism Q2_0 at group 128: {fp16 d; u8 qs[32]}
  kPTQ1_0 = 143,  // Prism ternary, group 128: {u8 qs[24]; u8 qh[2]; fp16 d}
  // tern's in-memory re-pack of PTQ1_0 (quant/trit_planes.h): not a ggml id, never read from or written
  // to a file.
  kTritPlanes = 0x10000 + 143,
  // tern's in-memory re-order of PQ2_0 in 16-row panels (quant/pq2_panels.h): the same bytes, but only
  // whole panels are addressable, not rows. Not a ggml id, never in a file.
  kPq2Panels = 0x10000 + 142,
  // tern's in-memory re-pack of PTQ1_0 in 16-row panels, five codes a byte (quant/trit_panels.h): only
  // whole panels are addressable. Not a ggml id, never in a file.
  kTritPanels = 0x20000 + 143,
  // tern's in-memory re-pack of PTQ1_0 for AVX2, five codes a byte row by row (quant/trit_rows.h). Not a
  // ggml id, never in a file.
  kTritRows = 0x30000 + 143,
};

struct TypeTraits {
  TensorType type;
  std::string_view name;  // "f32", "pq2_0", ...
  int64_t block_elems;    // values per block
  size_t block_bytes;     // bytes per block
  bool ternary;           // values are (code-1)*d with code in {0,1,2} (PQ2_0 may also hold code 3)
  bool in_files;          // a GGUF tensor may have it (false: an in-memory form only)
};

// nullopt for an id tern does not know (or an in-memory form's).
std::optional<TensorType> type_from_id(uint32_t id);
// By lower-case name ("pq2_0"); nullopt if unknown or not a file type.
std::optional<TensorType> type_from_name(std::string_view name);
const TypeTraits& traits(TensorType type);
inline bool is_ternary(TensorType type) {
  return traits(type).ternary;
}

// Bytes of one row of k values; nullopt if k is not a multiple of the block or the size overflows.
// Trit planes and trit rows rows are not blocks × block_bytes (quant/trit_planes.h, trit_rows.h). PQ2_0
// panels answer PQ2_0's row size, the bytes a row holds, though a panel-form matrix takes whole panels
// (quant::pq2_panels_bytes). Trit panels answer a panel's bytes / 16.
std::optional<size_t> row_bytes(TensorType type, int64_t k);

// Bytes of a matrix of `rows` rows of k values: rows × row_bytes, but whole panels for the panel forms;
// nullopt where row_bytes has none.
std::optional<size_t> matrix_bytes(TensorType type, int64_t rows, int64_t k);

// The forms whose rows are interleaved in 16-row panels: no row has an address of its own.
inline bool is_panel_form(TensorType type) {
  return type == TensorType::kPq2Panels || type == TensorType::kTritPanels;
}

}  // namespace tern::quant
