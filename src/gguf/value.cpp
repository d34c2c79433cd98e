#include "gguf/value.h"

#include <limits>

namespace tern::gguf {

const char* value_type_name(ValueType type) {
  switch (type) {
    case ValueType::kUInt8:
      return "uint8";
    case ValueType::kInt8:
      return "int8";
    case ValueType::kUInt16:
      return "uint16";
    case ValueType::kInt16:
      return "int16";
    case ValueType::kUInt32:
      return "uint32";
    case ValueType::kInt32:
      return "int32";
    case ValueType::kFloat32:
      return "float32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUInt64:
      return "uint64";
    case ValueType::kInt64:
      return "int64";
    case ValueType::kFloat64:
      return "float64";
  }
  return "unknown";
}

bool is_integer_type(ValueType type) {
  switch (type) {
    case ValueType::kUInt8:
    case ValueType::kInt8:
    case ValueType::kUInt16:
    case ValueType::kInt16:
    case ValueType::kUInt32:
    case ValueType::kInt32:
    case ValueType::kUInt64:
    case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

std::optional<ValueType> value_type_from_id(uint32_t id) {
  if (id > static_cast<uint32_t>(ValueType::kFloat64)) return std::nullopt;
  return static_cast<ValueType>(id);
}

Value Value::i32_array(const std::vector<int32_t>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (int32_t x : v) items.push_back(i32(x));
  return array(ValueType::kInt32, std::move(items));
}

Value Value::f32_array(const std::vector<float>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (float x : v) items.push_back(f32(x));
  return array(ValueType::kFloat32, std::move(items));
}

Value Value::string_array(const std::vector<std::string>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (const std::string& x : v) items.push_back(string(x));
  return array(ValueType::kString, std::move(items));
}

std::optional<uint64_t> as_uint(const Value& value) {
  if (!is_integer_type(value.type)) return std::nullopt;
  if (const auto* u = std::get_if<uint64_t>(&value.data)) return *u;
  if (const auto* i = std::get_if<int64_t>(&value.data); i != nullptr && *i >= 0) {
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

std::optional<int64_t> as_int(const Value& value) {
  if (!is_integer_type(value.type)) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&value.data)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&value.data);
      u != nullptr && *u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(*u);
  }
  return std::nullopt;
}

}  // namespace tern::gguf
