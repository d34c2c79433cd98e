#include "core/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include "core/error.h"

namespace tern {
namespace {

static_assert(std::endian::native == std::endian::little, "npy '<f4' is written as the host's floats");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kAlignment = 64;
constexpr size_t kMaxHeader = 1 << 16;

std::string shape_text(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

// Sets `count` to the product of the dimensions; false for a negative one or a product whose bytes
// overflow.
bool element_count(const std::vector<int64_t>& shape, uint64_t& count) {
  count = 1;
  for (const int64_t dim : shape) {
    if (dim < 0) return false;
    const auto d = static_cast<uint64_t>(dim);
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / 4 / d) return false;
    count *= d;
  }
  return true;
}

std::string header_bytes(const std::vector<int64_t>& shape) {
  std::string dict =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape_text(shape));
  const size_t unpadded = kMagicSize + 4 + dict.size() + 1;
  dict.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back('\x01');
  out.push_back('\x00');
  const auto length = static_cast<uint16_t>(dict.size());
  out.push_back(static_cast<char>(length & 0xff));
  out.push_back(static_cast<char>(length >> 8));
  return out + dict;
}

// The text after `key` in the header dict, up to its value's end; "" if absent.
std::string_view dict_value(std::string_view dict, std::string_view key) {
  const size_t at = dict.find(fmt::format("'{}':", key));
  if (at == std::string_view::npos) return {};
  std::string_view rest = dict.substr(at + key.size() + 3);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return {};
  const size_t end = rest.front() == '(' ? rest.find(')') + 1 : rest.find_first_of(",}");
  return end == std::string_view::npos ? std::string_view{} : rest.substr(0, end);
}

std::vector<int64_t> parse_shape(std::string_view text, const std::string& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    fail(ErrorKind::kFormat, "{}: npy shape '{}' is not a tuple", path, text);
  }
  std::vector<int64_t> shape;
  text = text.substr(1, text.size() - 2);
  while (!text.empty()) {
    while (!text.empty() && (text.front() == ' ' || text.front() == ',')) text.remove_prefix(1);
    if (text.empty()) break;
    int64_t dim = 0;
    size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
      if (dim > (std::numeric_limits<int64_t>::max() - 9) / 10) {
        fail(ErrorKind::kFormat, "{}: npy dimension too large", path);
      }
      dim = dim * 10 + (text[digits] - '0');
      ++digits;
    }
    if (digits == 0) fail(ErrorKind::kFormat, "{}: npy shape has a bad dimension '{}'", path, text);
    shape.push_back(dim);
    text.remove_prefix(digits);
  }
  return shape;
}

}  // namespace

NpyWriter::NpyWriter(const std::string& path, std::vector<int64_t> shape) : path_(path) {
  if (!element_count(shape, expected_))
    fail(ErrorKind::kInput, "{}: bad npy shape {}", path, shape_text(shape));
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) fail(ErrorKind::kIo, "cannot create {}: {}", path, std::strerror(errno));
  const std::string header = header_bytes(shape);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    std::fclose(file_);
    file_ = nullptr;
    fail(ErrorKind::kIo, "{}: write failed", path_);
  }
}

NpyWriter::~NpyWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void NpyWriter::write(std::span<const float> values) {
  if (file_ == nullptr) fail(ErrorKind::kInternal, "{}: write after finish", path_);
  if (std::fwrite(values.data(), sizeof(float), values.size(), file_) != values.size()) {
    fail(ErrorKind::kIo, "{}: write failed at value {}", path_, written_);
  }
  written_ += values.size();
}

void NpyWriter::finish() {
  if (written_ != expected_) {
    fail(ErrorKind::kInternal, "{}: wrote {} values, the shape holds {}", path_, written_, expected_);
  }
  const int status = std::fclose(file_);
  file_ = nullptr;
  if (status != 0) fail(ErrorKind::kIo, "{}: close failed", path_);
}

void write_npy(const std::string& path, std::span<const float> data, std::vector<int64_t> shape) {
  NpyWriter writer(path, std::move(shape));
  writer.write(data);
  writer.finish();
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIo, "cannot open {}", path);
  std::error_code ec;
  const uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) fail(ErrorKind::kIo, "cannot stat {}: {}", path, ec.message());

  char prefix[12] = {};
  in.read(prefix, 10);
  if (!in || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    fail(ErrorKind::kFormat, "{}: not a .npy file", path);
  const auto major = static_cast<uint8_t>(prefix[6]);
  size_t header_length = static_cast<uint8_t>(prefix[8]) | (size_t{static_cast<uint8_t>(prefix[9])} << 8);
  size_t header_start = 10;
  if (major == 2 || major == 3) {
    in.read(prefix + 10, 2);
    header_length |=
        (size_t{static_cast<uint8_t>(prefix[10])} << 16) | (size_t{static_cast<uint8_t>(prefix[11])} << 24);
    header_start = 12;
  } else if (major != 1) {
    fail(ErrorKind::kFormat, "{}: npy version {} is not supported", path, major);
  }
  if (header_length > kMaxHeader || header_start + header_length > file_size) {
    fail(ErrorKind::kFormat, "{}: npy header length {} does not fit the file", path, header_length);
  }
  std::string header(header_length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_length));
  if (!in) fail(ErrorKind::kFormat, "{}: truncated npy header", path);

  if (dict_value(header, "descr") != "'<f4'") {
    fail(ErrorKind::kFormat, "{}: npy dtype {} is not '<f4'", path, dict_value(header, "descr"));
  }
  if (dict_value(header, "fortran_order") != "False")
    fail(ErrorKind::kFormat, "{}: npy is not C order", path);
  NpyArray array;
  array.shape = parse_shape(dict_value(header, "shape"), path);
  uint64_t count = 0;
  if (!element_count(array.shape, count) ||
      count * sizeof(float) != file_size - header_start - header_length) {
    fail(ErrorKind::kFormat, "{}: npy data of {} bytes does not match shape {}", path,
         file_size - header_start - header_length, shape_text(array.shape));
  }
  array.data.resize(count);
  in.read(reinterpret_cast<char*>(array.data.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (!in) fail(ErrorKind::kIo, "{}: read failed", path);
  return array;
}

}  // namespace tern
