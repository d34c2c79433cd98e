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
  const std::string& path() const { return path_; }

 private:
  void release();

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tern
