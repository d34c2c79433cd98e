#include "gguf/writer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "core/error.h"

namespace tern::gguf {
namespace {

constexpr uint32_t kVersion = 3;
constexpr std::string_view kAlignmentKey = "general.alignment";

uint64_t max_of(ValueType type) {
  switch (type) {
    case ValueType::kUInt8:
      return std::numeric_limits<uint8_t>::max();
    case ValueType::kUInt16:
      return std::numeric_limits<uint16_t>::max();
    case ValueType::kUInt32:
      return std::numeric_limits<uint32_t>::max();
    default:
      return std::numeric_limits<uint64_t>::max();
  }
}

std::pair<int64_t, int64_t> range_of(ValueType type) {
  switch (type) {
    case ValueType::kInt8:
      return {std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max()};
    case ValueType::kInt16:
      return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    case ValueType::kInt32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// A Value is only writable if its variant holds what its type says and the number fits the width;
// checked once at set() so that begin_data() cannot fail halfway through the header.
void check_value(const std::string& path, const std::string& key, const Value& value, int depth) {
  const auto bad = [&](std::string_view why) {
    fail(ErrorKind::kInput, "{}: key '{}': {} value {}", path, key, value_type_name(value.type), why);
  };
  switch (value.type) {
    case ValueType::kUInt8:
    case ValueType::kUInt16:
    case ValueType::kUInt32:
    case ValueType::kUInt64: {
      const auto* u = std::get_if<uint64_t>(&value.data);
      if (u == nullptr) bad("does not hold an unsigned integer");
      if (*u > max_of(value.type)) bad(fmt::format("{} is out of range", *u));
      return;
    }
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64: {
      const auto* i = std::get_if<int64_t>(&value.data);
      if (i == nullptr) bad("does not hold a signed integer");
      const auto [lo, hi] = range_of(value.type);
      if (*i < lo || *i > hi) bad(fmt::format("{} is out of range", *i));
      return;
    }
    case ValueType::kFloat32:
    case ValueType::kFloat64: {
      const auto* d = std::get_if<double>(&value.data);
      if (d == nullptr) bad("does not hold a float");
      if (value.type == ValueType::kFloat32 && std::isfinite(*d) &&
          std::fabs(*d) > double{std::numeric_limits<float>::max()}) {
        bad(fmt::format("{} is out of range", *d));
      }
      return;
    }
    case ValueType::kBool:
      if (!std::holds_alternative<bool>(value.data)) bad("does not hold a bool");
      return;
    case ValueType::kString:
      if (!std::holds_alternative<std::string>(value.data)) bad("does not hold a string");
      return;
    case ValueType::kArray: {
      const auto* a = std::get_if<Array>(&value.data);
      if (a == nullptr) bad("does not hold an array");
      if (depth >= kMaxArrayNesting) bad(fmt::format("nests arrays deeper than {} levels", kMaxArrayNesting));
      if (!value_type_from_id(static_cast<uint32_t>(a->elem_type))) bad("has an unknown element type");
      for (const Value& item : a->items) {
        if (item.type != a->elem_type) {
          bad(fmt::format("of {} holds an element of type {}", value_type_name(a->elem_type),
                          value_type_name(item.type)));
        }
        check_value(path, key, item, depth + 1);
      }
      return;
    }
  }
  fail(ErrorKind::kInput, "{}: key '{}': unknown value type {}", path, key,
       static_cast<uint32_t>(value.type));
}

uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

}  // namespace

Writer::Writer(std::string path, uint32_t alignment) : path_(std::move(path)), alignment_(alignment) {
  if (!std::has_single_bit(alignment)) {
    fail(ErrorKind::kInput, "{}: alignment {} is not a non-zero power of two", path_, alignment);
  }
  out_ = std::fopen(path_.c_str(), "wb");
  if (out_ == nullptr) fail(ErrorKind::kIo, "{}: cannot create: {}", path_, std::strerror(errno));
}

Writer::~Writer() {
  if (out_ != nullptr) std::fclose(out_);
  if (!finished_) std::remove(path_.c_str());
}

void Writer::set(std::string key, Value value) {
  if (data_started_) fail(ErrorKind::kIo, "{}: key '{}' set after begin_data()", path_, key);
  check_value(path_, key, value, 0);
  auto it = std::find_if(kv_.begin(), kv_.end(), [&](const auto& kv) { return kv.first == key; });
  if (it != kv_.end()) {
    it->second = std::move(value);
  } else {
    kv_.emplace_back(std::move(key), std::move(value));
  }
}

void Writer::add_tensor(std::string name, quant::TensorType type, std::vector<int64_t> ne) {
  if (data_started_) fail(ErrorKind::kIo, "{}: tensor '{}' added after begin_data()", path_, name);
  if (ne.empty() || ne.size() > 4) {
    fail(ErrorKind::kInput, "{}: tensor '{}': {} dims, expected 1..4", path_, name, ne.size());
  }
  for (const Pending& t : tensors_) {
    if (t.name == name) fail(ErrorKind::kInput, "{}: tensor '{}' declared twice", path_, name);
  }
  // Same bound as the reader: the product of the non-zero dims fits in int64.
  uint64_t nonzero_product = 1;
  uint64_t rows = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] < 0) fail(ErrorKind::kInput, "{}: tensor '{}': ne[{}] = {} is negative", path_, name, d, ne[d]);
    const auto n = static_cast<uint64_t>(ne[d]);
    if (n != 0 && nonzero_product > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n) {
      fail(ErrorKind::kInput, "{}: tensor '{}': element count overflows int64", path_, name);
    }
    if (n != 0) nonzero_product *= n;
    if (d > 0) rows *= n;
  }
  const quant::TypeTraits& traits = quant::traits(type);
  if (ne[0] % traits.block_elems != 0) {
    fail(ErrorKind::kInput, "{}: tensor '{}': ne[0] = {} is not a multiple of the {} block size {}", path_,
         name, ne[0], traits.name, traits.block_elems);
  }
  // Offsets and sizes stay below 2^63 so that every file position fits in an off_t.
  constexpr auto kMaxBytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const auto row = quant::row_bytes(type, ne[0]);
  const uint64_t offset =
      tensors_.empty() ? 0 : align_up(tensors_.back().offset + tensors_.back().nbytes, alignment_);
  if (!row || (rows != 0 && *row > kMaxBytes / rows) || offset > kMaxBytes ||
      rows * *row > kMaxBytes - offset) {
    fail(ErrorKind::kInput, "{}: tensor '{}': byte size of {} rows of {} {} values overflows", path_, name,
         rows, ne[0], traits.name);
  }
  tensors_.push_back({std::move(name), type, std::move(ne), rows * *row, offset});
}

uint64_t Writer::tensor_bytes(size_t index) const {
  if (index >= tensors_.size()) {
    fail(ErrorKind::kInput, "{}: tensor index {} out of range ({} tensors)", path_, index, tensors_.size());
  }
  return tensors_[index].nbytes;
}

void Writer::begin_data() {
  if (data_started_) fail(ErrorKind::kIo, "{}: begin_data() called twice", path_);
  auto it = std::find_if(kv_.begin(), kv_.end(), [](const auto& kv) { return kv.first == kAlignmentKey; });
  if (it != kv_.end()) {
    const auto declared = as_uint(it->second);
    if (!declared || *declared != alignment_) {
      fail(ErrorKind::kInput, "{}: key '{}' disagrees with the writer's alignment {}", path_, kAlignmentKey,
           alignment_);
    }
  } else if (alignment_ != kDefaultAlignment) {
    kv_.emplace_back(std::string(kAlignmentKey), Value::u32(alignment_));
  }

  put("GGUF", 4);
  put_u32(kVersion);
  put_u64(tensors_.size());
  put_u64(kv_.size());
  for (const auto& [key, value] : kv_) {
    put_string(key);
    put_u32(static_cast<uint32_t>(value.type));
    put_value(value);
  }
  for (const Pending& t : tensors_) {
    put_string(t.name);
    put_u32(static_cast<uint32_t>(t.ne.size()));
    for (int64_t n : t.ne) put_u64(static_cast<uint64_t>(n));
    put_u32(static_cast<uint32_t>(t.type));
    put_u64(t.offset);
  }
  pad_to(alignment_);
  data_started_ = true;
  skip_empty_tensors();
}

void Writer::write(std::span<const uint8_t> bytes) {
  if (!data_started_ || finished_) {
    fail(ErrorKind::kIo, "{}: tensor data written {}", path_,
         finished_ ? "after finish()" : "before begin_data()");
  }
  while (!bytes.empty()) {
    if (current_ == tensors_.size()) {
      fail(ErrorKind::kIo, "{}: {} bytes written past the last declared tensor", path_, bytes.size());
    }
    const Pending& t = tensors_[current_];
    const uint64_t take = std::min<uint64_t>(bytes.size(), t.nbytes - written_in_current_);
    put(bytes.data(), static_cast<size_t>(take));
    bytes = bytes.subspan(static_cast<size_t>(take));
    written_in_current_ += take;
    if (written_in_current_ == t.nbytes) {
      pad_to(alignment_);
      ++current_;
      written_in_current_ = 0;
      skip_empty_tensors();
    }
  }
}

void Writer::finish() {
  if (finished_) fail(ErrorKind::kIo, "{}: finish() called twice", path_);
  if (!data_started_) begin_data();
  if (current_ < tensors_.size()) {
    const Pending& t = tensors_[current_];
    fail(ErrorKind::kIo, "{}: finish() with tensor '{}' incomplete: {} of {} bytes written", path_, t.name,
         written_in_current_, t.nbytes);
  }
  std::FILE* out = std::exchange(out_, nullptr);
  const bool flushed = std::fflush(out) == 0 && std::ferror(out) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(out) == 0;
  if (!flushed || !closed) {
    fail(ErrorKind::kIo, "{}: cannot finish writing: {}", path_,
         std::strerror(flushed ? errno : flush_errno));
  }
  finished_ = true;
}

void Writer::skip_empty_tensors() {
  while (current_ < tensors_.size() && tensors_[current_].nbytes == 0) ++current_;
}

void Writer::put(const void* data, size_t n) {
  if (n == 0) return;
  if (std::fwrite(data, 1, n, out_) != n) {
    fail(ErrorKind::kIo, "{}: write failed at byte {}: {}", path_, position_, std::strerror(errno));
  }
  position_ += n;
}

void Writer::put_u32(uint32_t v) {
  uint8_t b[4];
  for (size_t i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  put(b, 4);
}

void Writer::put_u64(uint64_t v) {
  uint8_t b[8];
  for (size_t i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  put(b, 8);
}

void Writer::put_string(const std::string& s) {
  put_u64(s.size());
  put(s.data(), s.size());
}

void Writer::put_value(const Value& value) {
  switch (value.type) {
    case ValueType::kUInt8:
    case ValueType::kInt8:
    case ValueType::kBool: {
      const uint8_t b = value.type == ValueType::kBool ? uint8_t{std::get<bool>(value.data)}
                        : value.type == ValueType::kUInt8
                            ? static_cast<uint8_t>(std::get<uint64_t>(value.data))
                            : static_cast<uint8_t>(std::get<int64_t>(value.data));
      put(&b, 1);
      return;
    }
    case ValueType::kUInt16:
    case ValueType::kInt16: {
      const auto v = value.type == ValueType::kUInt16 ? static_cast<uint16_t>(std::get<uint64_t>(value.data))
                                                      : static_cast<uint16_t>(std::get<int64_t>(value.data));
      const uint8_t b[2] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)};
      put(b, 2);
      return;
    }
    case ValueType::kUInt32:
      put_u32(static_cast<uint32_t>(std::get<uint64_t>(value.data)));
      return;
    case ValueType::kInt32:
      put_u32(static_cast<uint32_t>(std::get<int64_t>(value.data)));
      return;
    case ValueType::kUInt64:
      put_u64(std::get<uint64_t>(value.data));
      return;
    case ValueType::kInt64:
      put_u64(static_cast<uint64_t>(std::get<int64_t>(value.data)));
      return;
    case ValueType::kFloat32:
      put_u32(std::bit_cast<uint32_t>(static_cast<float>(std::get<double>(value.data))));
      return;
    case ValueType::kFloat64:
      put_u64(std::bit_cast<uint64_t>(std::get<double>(value.data)));
      return;
    case ValueType::kString:
      put_string(std::get<std::string>(value.data));
      return;
    case ValueType::kArray: {
      const Array& a = std::get<Array>(value.data);
      put_u32(static_cast<uint32_t>(a.elem_type));
      put_u64(a.items.size());
      for (const Value& item : a.items) put_value(item);
      return;
    }
  }
}

void Writer::pad_to(uint64_t alignment) {
  static constexpr uint8_t kZeros[64] = {};
  while (position_ % alignment != 0) {
    put(kZeros, static_cast<size_t>(std::min<uint64_t>(sizeof kZeros, alignment - position_ % alignment)));
  }
}

}  // namespace tern::gguf
