// GGUF v3 reader over an mmap (model-spec §2.1): every structure is bounds-checked; a malformed
// file throws Error(kFormat) naming the file, the key or tensor, and the byte offset.
// Tensor data is never copied: views point into the mapping.
// Against hostile files: every count and length is checked against the bytes left before anything
// is reserved, arrays nest at most kMaxArrayNesting deep, so memory stays within a small multiple of
// the file size. Checked: magic, version 3, value types, bool bytes, general.alignment (a non-zero
// power of two), unique keys and tensor names, n_dims 1..4, ne >= 0 with an int64 element count,
// known tensor type, ne[0] a whole number of blocks, aligned offsets, data inside the file and no
// two tensors overlapping.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "gguf/value.h"
#include "quant/types.h"

namespace tern::gguf {

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] fastest (K for weights)
  quant::TensorType type = quant::TensorType::kF32;
  uint64_t offset = 0;  // relative to the data section
  uint64_t nbytes = 0;
  std::span<const uint8_t> data;  // view into the file
  uint64_t info_offset = 0;       // byte offset of this tensor's info record (for errors)

  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
};

class Reader {
 public:
  // Maps and parses a file.
  static Reader open(const std::string& path);
  // Parses bytes the caller keeps alive (fuzzing, tests); `name` is used in error messages.
  static Reader parse(std::span<const uint8_t> bytes, std::string name);

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return bytes_.size(); }
  // MappedFile::release_pages for a part of a mapped file; nothing for parsed bytes.
  void release_pages(std::span<const uint8_t> range) const { file_.release_pages(range); }

  // Metadata in file order.
  const std::vector<std::pair<std::string, Value>>& metadata() const { return kv_; }
  const Value* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters: throw Error(kConfig) naming file and key if missing or of the wrong type.
  // Integer getters accept any integer width whose value fits (model-spec §11.8).
  uint64_t get_uint(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  const Array& get_array(std::string_view key) const;
  std::optional<uint64_t> get_uint_or(std::string_view key) const;  // nullopt if absent

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  bool holds_type(quant::TensorType type) const;  // whether any tensor is of `type`
  const TensorInfo* find_tensor(std::string_view name) const;
  const TensorInfo& tensor(std::string_view name) const;  // throws Error(kFormat) if absent

 private:
  Reader() = default;
  void parse_all();

  MappedFile file_;
  std::span<const uint8_t> bytes_;
  std::string name_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t, std::less<>> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace tern::gguf
