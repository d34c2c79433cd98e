#include "gguf/reader.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "core/error.h"

namespace tern::gguf {
namespace {

constexpr uint32_t kVersion = 3;
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;                  // empty key, value type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, n_dims, ne[0], type, offset
constexpr size_t kMaxNameInMessage = 96;

// Smallest encoding of one value of `type`, so that a count can be checked against the bytes left
// before anything is reserved for it.
uint64_t min_encoded_size(ValueType type) {
  switch (type) {
    case ValueType::kUInt8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUInt16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUInt32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUInt64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
    case ValueType::kString:
      return 8;  // a string is at least its length field
    case ValueType::kArray:
      return 4 + 8;  // element type and count
  }
  return 1;
}

// Names from a hostile file may hold any byte; error messages stay one printable line.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxNameInMessage)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\') {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  if (text.size() > kMaxNameInMessage) out += "...";
  return out;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b;
}

std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

// A bounds-checked little-endian cursor. `context` ("header", "key 'x'", "tensor 'y'") prefixes
// every error so the message says what was being read.
class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return bytes_.size() - pos_; }
  void set_context(std::string context) { context_ = std::move(context); }

  template <class... Args>
  [[noreturn]] void fail_at(uint64_t at, fmt::format_string<Args...> format, Args&&... args) const {
    fail(ErrorKind::kFormat, "{}: {} at byte {}: {}", name_, context_, at,
         fmt::format(format, std::forward<Args>(args)...));
  }

  std::span<const uint8_t> take(uint64_t n, std::string_view what) {
    if (n > left()) fail_at(pos_, "truncated {}: needs {} bytes, {} left", what, n, left());
    auto out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  uint64_t little_endian(size_t n, std::string_view what) {
    uint64_t v = 0;
    auto b = take(n, what);
    for (size_t i = 0; i < n; ++i) v |= uint64_t{b[i]} << (8 * i);
    return v;
  }
  uint8_t u8(std::string_view what) { return static_cast<uint8_t>(little_endian(1, what)); }
  uint16_t u16(std::string_view what) { return static_cast<uint16_t>(little_endian(2, what)); }
  uint32_t u32(std::string_view what) { return static_cast<uint32_t>(little_endian(4, what)); }
  uint64_t u64(std::string_view what) { return little_endian(8, what); }

  std::string string(std::string_view what) {
    const uint64_t at = pos_;
    const uint64_t length = u64(what);
    if (length > left()) {
      fail_at(at, "{} length {} exceeds the {} bytes left", what, length, left());
    }
    auto b = take(length, what);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }

  ValueType value_type(std::string_view what) {
    const uint64_t at = pos_;
    const uint32_t id = u32(what);
    auto type = value_type_from_id(id);
    if (!type) fail_at(at, "unknown {} {}", what, id);
    return *type;
  }

  Value value(ValueType type, int depth) {
    switch (type) {
      case ValueType::kUInt8:
        return {type, uint64_t{u8("uint8 value")}};
      case ValueType::kInt8:
        return {type, int64_t{static_cast<int8_t>(u8("int8 value"))}};
      case ValueType::kUInt16:
        return {type, uint64_t{u16("uint16 value")}};
      case ValueType::kInt16:
        return {type, int64_t{static_cast<int16_t>(u16("int16 value"))}};
      case ValueType::kUInt32:
        return {type, uint64_t{u32("uint32 value")}};
      case ValueType::kInt32:
        return {type, int64_t{static_cast<int32_t>(u32("int32 value"))}};
      case ValueType::kUInt64:
        return {type, u64("uint64 value")};
      case ValueType::kInt64:
        return {type, static_cast<int64_t>(u64("int64 value"))};
      case ValueType::kFloat32:
        return {type, double{std::bit_cast<float>(u32("float32 value"))}};
      case ValueType::kFloat64:
        return {type, std::bit_cast<double>(u64("float64 value"))};
      case ValueType::kBool: {
        const uint64_t at = pos_;
        const uint8_t b = u8("bool value");
        if (b > 1) fail_at(at, "bool byte {} is neither 0 nor 1", b);
        return {type, b == 1};
      }
      case ValueType::kString:
        return {type, string("string value")};
      case ValueType::kArray:
        return array(depth);
    }
    fail_at(pos_, "unknown value type {}", static_cast<uint32_t>(type));
  }

 private:
  Value array(int depth) {
    const uint64_t at = pos_;
    if (depth >= kMaxArrayNesting) fail_at(at, "arrays nested deeper than {} levels", kMaxArrayNesting);
    const ValueType elem_type = value_type("array element type");
    const uint64_t count = u64("array count");
    if (count > left() / min_encoded_size(elem_type)) {
      fail_at(at, "array of {} {} values cannot fit in the {} bytes left", count, value_type_name(elem_type),
              left());
    }
    Array out{elem_type, {}};
    out.items.reserve(count);
    for (uint64_t i = 0; i < count; ++i) out.items.push_back(value(elem_type, depth + 1));
    return {ValueType::kArray, std::move(out)};
  }

  std::span<const uint8_t> bytes_;
  const std::string& name_;
  uint64_t pos_ = 0;
  std::string context_ = "header";
};

// model-spec §2.1: general.alignment is a non-zero power of two (u32; any integer width accepted).
uint32_t checked_alignment(const Parser& p, uint64_t at, const Value& value) {
  if (!is_integer_type(value.type)) {
    p.fail_at(at, "alignment has type {}, expected an integer", value_type_name(value.type));
  }
  const auto a = as_uint(value);
  if (!a || *a > std::numeric_limits<uint32_t>::max() || !std::has_single_bit(*a)) {
    const auto shown = as_int(value);
    p.fail_at(at, "alignment {} is not a non-zero power of two that fits in uint32",
              shown ? fmt::format("{}", *shown) : fmt::format("{}", *a));
  }
  return static_cast<uint32_t>(*a);
}

}  // namespace

Reader Reader::open(const std::string& path) {
  Reader r;
  r.file_ = MappedFile::open(path);
  r.bytes_ = r.file_.bytes();
  r.name_ = path;
  r.parse_all();
  return r;
}

Reader Reader::parse(std::span<const uint8_t> bytes, std::string name) {
  Reader r;
  r.bytes_ = bytes;
  r.name_ = std::move(name);
  r.parse_all();
  return r;
}

void Reader::parse_all() {
  Parser p(bytes_, name_);
  const auto magic = p.take(4, "magic");
  if (magic[0] != 'G' || magic[1] != 'G' || magic[2] != 'U' || magic[3] != 'F') {
    p.fail_at(0, "bad magic {} (expected \"GGUF\")",
              printable({reinterpret_cast<const char*>(magic.data()), magic.size()}));
  }
  version_ = p.u32("version");
  if (version_ != kVersion) p.fail_at(4, "unsupported GGUF version {} (tern reads version 3)", version_);
  const uint64_t n_tensors = p.u64("tensor count");
  const uint64_t n_kv = p.u64("metadata key count");
  if (n_kv > p.left() / kMinKvBytes) {
    p.fail_at(16, "metadata key count {} cannot fit in the {} bytes left", n_kv, p.left());
  }
  if (n_tensors > (p.left() - n_kv * kMinKvBytes) / kMinTensorInfoBytes) {
    p.fail_at(8, "tensor count {} cannot fit in the {} bytes left", n_tensors, p.left());
  }

  kv_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t at = p.pos();
    p.set_context(fmt::format("key #{}", i));
    std::string key = p.string("key");
    p.set_context(fmt::format("key '{}'", printable(key)));
    if (auto it = kv_index_.find(key); it != kv_index_.end()) {
      p.fail_at(at, "duplicate key (first defined as key #{})", it->second);
    }
    const ValueType type = p.value_type("value type");
    Value value = p.value(type, 0);
    if (key == "general.alignment") alignment_ = checked_alignment(p, at, value);
    kv_index_.emplace(key, kv_.size());
    kv_.emplace_back(std::move(key), std::move(value));
  }

  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    t.info_offset = p.pos();
    p.set_context(fmt::format("tensor #{}", i));
    t.name = p.string("tensor name");
    p.set_context(fmt::format("tensor '{}'", printable(t.name)));
    if (auto it = tensor_index_.find(t.name); it != tensor_index_.end()) {
      p.fail_at(t.info_offset, "duplicate tensor name (first is tensor #{})", it->second);
    }
    const uint64_t dims_at = p.pos();
    t.n_dims = p.u32("n_dims");
    if (t.n_dims < 1 || t.n_dims > 4) p.fail_at(dims_at, "n_dims {} is not in 1..4", t.n_dims);
    // The product of the non-zero dims must fit in int64, so that every partial product that
    // TensorInfo::elements() and rows() form fits too, even when another dim is 0.
    uint64_t nonzero_product = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      const uint64_t ne_at = p.pos();
      t.ne[d] = static_cast<int64_t>(p.u64("ne"));
      if (t.ne[d] < 0) p.fail_at(ne_at, "ne[{}] = {} is negative", d, t.ne[d]);
      if (t.ne[d] == 0) continue;
      const auto product = checked_mul(nonzero_product, static_cast<uint64_t>(t.ne[d]));
      if (!product || *product > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        p.fail_at(ne_at, "element count overflows int64 at ne[{}] = {}", d, t.ne[d]);
      }
      nonzero_product = *product;
    }
    const uint64_t type_at = p.pos();
    const uint32_t type_id = p.u32("tensor type");
    const auto type = quant::type_from_id(type_id);
    if (!type) p.fail_at(type_at, "unknown tensor type id {}", type_id);
    t.type = *type;
    const quant::TypeTraits& traits = quant::traits(t.type);
    if (t.ne[0] % traits.block_elems != 0) {
      p.fail_at(type_at, "ne[0] = {} is not a multiple of the {} block size {}", t.ne[0], traits.name,
                traits.block_elems);
    }
    const auto row = quant::row_bytes(t.type, t.ne[0]);
    const auto nbytes = row ? checked_mul(static_cast<uint64_t>(t.rows()), *row) : std::nullopt;
    if (!nbytes) p.fail_at(type_at, "byte size of {} {} values overflows", t.elements(), traits.name);
    t.nbytes = *nbytes;
    const uint64_t offset_at = p.pos();
    t.offset = p.u64("tensor offset");
    if (t.offset % alignment_ != 0) {
      p.fail_at(offset_at, "offset {} is not a multiple of the alignment {}", t.offset, alignment_);
    }
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  data_offset_ = (p.pos() + alignment_ - 1) / alignment_ * alignment_;
  for (TensorInfo& t : tensors_) {
    const uint64_t begin = saturating_add(data_offset_, t.offset);
    const uint64_t end = saturating_add(begin, t.nbytes);
    if (end > bytes_.size()) {
      fail(ErrorKind::kFormat, "{}: tensor '{}' at byte {}: data [{}, {}) extends past end of file (size {})",
           name_, printable(t.name), t.info_offset, begin, end, bytes_.size());
    }
    t.data = bytes_.subspan(begin, t.nbytes);
  }

  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : tensors_) {
    if (t.nbytes > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& prev = *by_offset[i - 1];
    const TensorInfo& t = *by_offset[i];
    if (t.offset < prev.offset + prev.nbytes) {
      fail(ErrorKind::kFormat, "{}: tensor '{}' at byte {}: data [{}, {}) overlaps tensor '{}' data [{}, {})",
           name_, printable(t.name), t.info_offset, data_offset_ + t.offset,
           data_offset_ + t.offset + t.nbytes, printable(prev.name), data_offset_ + prev.offset,
           data_offset_ + prev.offset + prev.nbytes);
    }
  }
}

const Value* Reader::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

namespace {

const Value& require(const Reader& r, std::string_view key) {
  const Value* v = r.find(key);
  if (v == nullptr) fail(ErrorKind::kConfig, "{}: key '{}' is missing", r.name(), key);
  return *v;
}

[[noreturn]] void wrong_type(const Reader& r, std::string_view key, const Value& v,
                             std::string_view expected) {
  fail(ErrorKind::kConfig, "{}: key '{}' has type {}, expected {}", r.name(), key, value_type_name(v.type),
       expected);
}

uint64_t to_uint(const Reader& r, std::string_view key, const Value& v) {
  if (!is_integer_type(v.type)) wrong_type(r, key, v, "an integer");
  const auto u = as_uint(v);
  if (!u) fail(ErrorKind::kConfig, "{}: key '{}' = {} is negative", r.name(), key, *as_int(v));
  return *u;
}

}  // namespace

uint64_t Reader::get_uint(std::string_view key) const {
  return to_uint(*this, key, require(*this, key));
}

std::optional<uint64_t> Reader::get_uint_or(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return std::nullopt;
  return to_uint(*this, key, *v);
}

int64_t Reader::get_int(std::string_view key) const {
  const Value& v = require(*this, key);
  if (!is_integer_type(v.type)) wrong_type(*this, key, v, "an integer");
  const auto i = as_int(v);
  if (!i) fail(ErrorKind::kConfig, "{}: key '{}' = {} does not fit in int64", name_, key, *as_uint(v));
  return *i;
}

double Reader::get_float(std::string_view key) const {
  const Value& v = require(*this, key);
  if (v.type != ValueType::kFloat32 && v.type != ValueType::kFloat64) wrong_type(*this, key, v, "a float");
  return std::get<double>(v.data);
}

bool Reader::get_bool(std::string_view key) const {
  const Value& v = require(*this, key);
  if (v.type != ValueType::kBool) wrong_type(*this, key, v, "a bool");
  return std::get<bool>(v.data);
}

const std::string& Reader::get_string(std::string_view key) const {
  const Value& v = require(*this, key);
  if (v.type != ValueType::kString) wrong_type(*this, key, v, "a string");
  return std::get<std::string>(v.data);
}

const Array& Reader::get_array(std::string_view key) const {
  const Value& v = require(*this, key);
  if (v.type != ValueType::kArray) wrong_type(*this, key, v, "an array");
  return std::get<Array>(v.data);
}

bool Reader::holds_type(quant::TensorType type) const {
  return std::ranges::any_of(tensors_, [&](const TensorInfo& t) { return t.type == type; });
}

const TensorInfo* Reader::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& Reader::tensor(std::string_view name) const {
  const TensorInfo* t = find_tensor(name);
  if (t == nullptr) fail(ErrorKind::kFormat, "{}: no tensor '{}'", name_, name);
  return *t;
}

}  // namespace tern::gguf
