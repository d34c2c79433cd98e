// GGUF metadata values (model-spec §2.2): scalars, strings and (nested) arrays.
#pragma once

#include <cstdint>
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

const char* value_type_name(ValueType type);
bool is_integer_type(ValueType type);

struct Value;

struct Array {
  ValueType elem_type = ValueType::kUInt8;
  std::vector<Value> items;
};

// A typed value. Integers of every width are held as int64/uint64 with their original GGUF type
// kept in `type`, so a file can be rewritten byte-identically.
struct Value {
  ValueType type = ValueType::kUInt8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;

  static Value u8(uint8_t v) { return {ValueType::kUInt8, uint64_t{v}}; }
  static Value u32(uint32_t v) { return {ValueType::kUInt32, uint64_t{v}}; }
  static Value u64(uint64_t v) { return {ValueType::kUInt64, v}; }
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
};

}  // namespace tern::gguf
