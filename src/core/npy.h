// NumPy .npy files of fp32 (format v1.0, dtype '<f4', C order): the teacher-forced logits `tern logits`
// writes, and the reference logits the parity fixtures hold (tools/reference/README.md).
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace tern {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // C order, product(shape) values
};

// Streams an array to disk: the header first, then rows in order; finish() checks the count.
class NpyWriter {
 public:
  // Throws Error(kIo) if the file cannot be created, Error(kInput) for a negative dimension.
  NpyWriter(const std::string& path, std::vector<int64_t> shape);
  ~NpyWriter();
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;

  void write(std::span<const float> values);
  // Throws Error(kInternal) if fewer or more values than the shape holds were written, Error(kIo) on a
  // failed write or close.
  void finish();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t expected_ = 0;
  uint64_t written_ = 0;
};

void write_npy(const std::string& path, std::span<const float> data, std::vector<int64_t> shape);

// Reads a v1/v2 '<f4' C-order file. Throws Error(kIo) if it cannot be read, Error(kFormat) naming the
// file for a bad magic, header, dtype, shape, or a data size that does not match the shape.
NpyArray read_npy(const std::string& path);

}  // namespace tern
