#include "gguf/value.h"

#include <gtest/gtest.h>

#include <limits>

namespace tern::gguf {
namespace {

TEST(GgufValue, TypeIdsNameAndClassifyAllThirteenTypes) {
  const char* names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                         "bool",  "string", "array",  "uint64", "int64",  "float64"};
  for (uint32_t id = 0; id < 13; ++id) {
    const auto type = value_type_from_id(id);
    ASSERT_TRUE(type.has_value()) << id;
    EXPECT_STREQ(value_type_name(*type), names[id]);
    const bool integer = id <= 5 || id == 10 || id == 11;
    EXPECT_EQ(is_integer_type(*type), integer) << names[id];
  }
  EXPECT_FALSE(value_type_from_id(13).has_value());
  EXPECT_FALSE(value_type_from_id(0xffffffffu).has_value());
  EXPECT_STREQ(value_type_name(static_cast<ValueType>(77)), "unknown");
}

TEST(GgufValue, ArrayHelpersKeepOrderAndElementType) {
  const Value ints = Value::i32_array({3, -1, 7});
  ASSERT_EQ(ints.type, ValueType::kArray);
  const auto& a = std::get<Array>(ints.data);
  EXPECT_EQ(a.elem_type, ValueType::kInt32);
  EXPECT_EQ(a.items, (std::vector<Value>{Value::i32(3), Value::i32(-1), Value::i32(7)}));

  const Value floats = Value::f32_array({0.5f, -2.0f});
  const auto& f = std::get<Array>(floats.data);
  EXPECT_EQ(f.elem_type, ValueType::kFloat32);
  EXPECT_EQ(f.items, (std::vector<Value>{Value::f32(0.5f), Value::f32(-2.0f)}));

  const Value strings = Value::string_array({"a", ""});
  const auto& s = std::get<Array>(strings.data);
  EXPECT_EQ(s.elem_type, ValueType::kString);
  EXPECT_EQ(s.items, (std::vector<Value>{Value::string("a"), Value::string("")}));
  EXPECT_TRUE(std::get<Array>(Value::string_array({}).data).items.empty());
}

TEST(GgufValue, IntegerAccessorsAcceptAnyWidthThatFits) {
  EXPECT_EQ(as_uint(Value::u8(200)), 200u);
  EXPECT_EQ(as_uint(Value::i32(5)), 5u);
  EXPECT_EQ(as_uint(Value::i8(-1)), std::nullopt);
  EXPECT_EQ(as_uint(Value::u64(std::numeric_limits<uint64_t>::max())), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(as_int(Value::i16(-300)), -300);
  EXPECT_EQ(as_int(Value::u32(4000000000u)), 4000000000);
  EXPECT_EQ(as_int(Value::u64(std::numeric_limits<uint64_t>::max())), std::nullopt);
  EXPECT_EQ(as_uint(Value::f32(1.0f)), std::nullopt);
  EXPECT_EQ(as_int(Value::boolean(true)), std::nullopt);
  EXPECT_EQ(as_int(Value::string("1")), std::nullopt);
}

}  // namespace
}  // namespace tern::gguf
