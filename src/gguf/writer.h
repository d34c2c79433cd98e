// Streaming GGUF v3 writer: metadata and every tensor's info are declared first, then tensor data
// is written in declaration order, in pieces, so memory stays bounded by the caller's chunk size.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "gguf/value.h"
#include "quant/types.h"

namespace tern::gguf {

// Errors name the path: Error(kIo) for file-system failures and for calls out of order or with
// more or fewer tensor bytes than declared; Error(kInput) for a value that does not match its type,
// an invalid shape or type, or a duplicate tensor name. A Writer destroyed before finish() deletes
// its partial file. `general.alignment` is written (appended) when alignment != 32 unless the caller
// set it; if set, it must equal the alignment.
class Writer {
 public:
  // Creates (truncates) the file now; alignment must be a non-zero power of two.
  explicit Writer(std::string path, uint32_t alignment = 32);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  void set(std::string key, Value value);  // replaces an existing key, keeps its position
  // ne in GGUF order (ne[0] fastest); n_dims = ne.size() (1..4).
  void add_tensor(std::string name, quant::TensorType type, std::vector<int64_t> ne);

  // Writes the header; after this only tensor data may follow.
  void begin_data();
  // Appends bytes to the current tensor; moves to the next tensor once one is complete.
  void write(std::span<const uint8_t> bytes);
  // Checks that every declared byte was written, pads, flushes and closes. Throws on I/O errors.
  void finish();

  uint64_t tensor_bytes(size_t index) const;
  size_t tensor_count() const { return tensors_.size(); }

 private:
  struct Pending {
    std::string name;
    quant::TensorType type;
    std::vector<int64_t> ne;
    uint64_t nbytes;
    uint64_t offset;
  };
  void put(const void* data, size_t n);
  void put_u32(uint32_t v);
  void put_u64(uint64_t v);
  void put_string(const std::string& s);
  void put_value(const Value& value);
  void pad_to(uint64_t alignment);
  void skip_empty_tensors();

  std::string path_;
  uint32_t alignment_;
  std::FILE* out_ = nullptr;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Pending> tensors_;
  uint64_t position_ = 0;
  size_t current_ = 0;
  uint64_t written_in_current_ = 0;
  bool data_started_ = false;
  bool finished_ = false;
};

}  // namespace tern::gguf
