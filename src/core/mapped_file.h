// A read-only memory map of a whole file. Tensor views borrow from it; it must outlive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tern {

class MappedFile {
 public:
  // Throws Error(kIo) naming the path and the OS reason.
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Drops the resident pages wholly inside `range` (a part of this mapping) from memory; a later read
  // pages them in again from the file. For bytes that were consumed once, such as weights transcoded
  // at load, so they stop counting against the process's memory. Ranges outside the mapping are ignored.
  void release_pages(std::span<const uint8_t> range) const;
  const std::string& path() const { return path_; }

 private:
  void release();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tern
