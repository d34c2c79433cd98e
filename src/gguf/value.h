// GGUF metadata values (model-spec §2.2): scalars, strings and (nested) arrays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tern::gguf {

enum class ValueType : uint32_t {
  kUInt8 = 0,
  kInt8 = 1,
  kUInt16 = 2,
  kInt16 = 3,
  kUInt32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUInt64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// Data alignment when general.alignment is absent (model-spec §2.1).
inline constexpr uint32_t kDefaultAlignment = 32;

// Arrays may hold arrays; both reader and writer refuse more than this many levels, so a hostile
// file cannot exhaust the stack.
inline constexpr int kMaxArrayNesting = 8;

const char* value_type_name(ValueType type);  // "uint8", ..., "float64"; "unknown" for a bad id
bool is_integer_type(ValueType type);
// nullopt for an id outside the 13 GGUF value types.
std::optional<ValueType> value_type_from_id(uint32_t id);

struct Value;

struct Array {
  ValueType elem_type = ValueType::kUInt8;
  std::vector<Value> items;

  friend bool operator==(const Array&, const Array&) = default;
};

// A typed value. Integers of every width are held as int64/uint64 with their original GGUF type
// kept in `type`, so a file can be rewritten byte-identically.
struct Value {
  ValueType type = ValueType::kUInt8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  static Value u8(uint8_t v) { return {ValueType::kUInt8, uint64_t{v}}; }
  static Value u16(uint16_t v) { return {ValueType::kUInt16, uint64_t{v}}; }
  static Value u32(uint32_t v) { return {ValueType::kUInt32, uint64_t{v}}; }
  static Value u64(uint64_t v) { return {ValueType::kUInt64, v}; }
  static Value i8(int8_t v) { return {ValueType::kInt8, int64_t{v}}; }
  static Value i16(int16_t v) { return {ValueType::kInt16, int64_t{v}}; }
  static Value i32(int32_t v) { return {ValueType::kInt32, int64_t{v}}; }
  static Value i64(int64_t v) { return {ValueType::kInt64, v}; }
  static Value f32(float v) { return {ValueType::kFloat32, double{v}}; }
  static Value f64(double v) { return {ValueType::kFloat64, v}; }
  static Value boolean(bool v) { return {ValueType::kBool, v}; }
  static Value string(std::string v) { return {ValueType::kString, std::move(v)}; }
  static Value array(ValueType elem_type, std::vector<Value> items) {
    return {ValueType::kArray, Array{elem_type, std::move(items)}};
  }
  static Value i32_array(const std::vector<int32_t>& v);
  static Value f32_array(const std::vector<float>& v);
  static Value string_array(const std::vector<std::string>& v);

  // Exact comparison (float values compare as doubles, so NaN != NaN).
  friend bool operator==(const Value&, const Value&) = default;
};

// The value as an unsigned / signed 64-bit integer, whatever its integer width; nullopt if it is not
// an integer or does not fit (model-spec §11.8: integer keys are read leniently).
std::optional<uint64_t> as_uint(const Value& value);
std::optional<int64_t> as_int(const Value& value);

}  // namespace tern::gguf
