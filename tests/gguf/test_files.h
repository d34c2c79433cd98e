// Helpers shared by the GGUF tests: scratch paths, whole-file reads, and a little-endian byte builder
// for hand-made (often deliberately broken) GGUF files.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace tern::gguf::testing {

// A path under the test temp dir, unique per test, removed when the test ends.
class ScratchPath {
 public:
  explicit ScratchPath(std::string_view suffix) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string file = std::string(info->test_suite_name()) + "." + info->name() + "." + std::string(suffix);
    for (char& c : file) {
      if (c == '/') c = '_';  // parameterized test names hold slashes
    }
    path_ = std::filesystem::path(::testing::TempDir()) / file;
    std::filesystem::remove(path_);
  }
  ScratchPath(const ScratchPath&) = delete;
  ScratchPath& operator=(const ScratchPath&) = delete;
  ~ScratchPath() { std::filesystem::remove(path_); }
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

// The tern::Error `f` throws; a test failure (and an empty kInternal error) if it throws none.
template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no tern::Error thrown";
  return Error(ErrorKind::kInternal, "");
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class GgufBytes {
 public:
  GgufBytes& raw(std::string_view s) {
    // Byte by byte: GCC 12 reports a false -Wstringop-overflow for a range insert here.
    for (char c : s) bytes.push_back(static_cast<uint8_t>(c));
    return *this;
  }
  GgufBytes& u8(uint8_t v) {
    bytes.push_back(v);
    return *this;
  }
  GgufBytes& u32(uint32_t v) { return little_endian(v, 4); }
  GgufBytes& u64(uint64_t v) { return little_endian(v, 8); }
  GgufBytes& i64(int64_t v) { return little_endian(static_cast<uint64_t>(v), 8); }
  GgufBytes& str(std::string_view s) { return u64(s.size()).raw(s); }
  GgufBytes& zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }
  GgufBytes& pad_to(size_t alignment) { return zeros((alignment - bytes.size() % alignment) % alignment); }
  // Records the current size under `name`, to aim truncations and expected byte offsets.
  GgufBytes& mark(const std::string& name) {
    marks[name] = bytes.size();
    return *this;
  }
  size_t at(const std::string& name) const { return marks.at(name); }

  std::vector<uint8_t> bytes;
  std::map<std::string, size_t> marks;

 private:
  GgufBytes& little_endian(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
};

}  // namespace tern::gguf::testing
