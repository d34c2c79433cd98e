#include "gguf/writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "gguf/reader.h"
#include "test_files.h"

namespace tern::gguf {
namespace {

using quant::TensorType;
using ::testing::AllOf;
using testing::error_of;
using ::testing::HasSubstr;
using testing::ScratchPath;

TEST(GgufWriter, RefusesValuesThatDoNotMatchTheirType) {
  ScratchPath path("gguf");
  Writer w(path.str());
  const std::vector<std::pair<Value, std::string>> cases = {
      {Value{ValueType::kUInt8, uint64_t{256}}, "256 is out of range"},
      {Value{ValueType::kInt16, int64_t{-40000}}, "-40000 is out of range"},
      {Value{ValueType::kUInt32, int64_t{1}}, "does not hold an unsigned integer"},
      {Value{ValueType::kString, true}, "does not hold a string"},
      {Value{ValueType::kFloat32, 1e300}, "out of range"},
      {Value::array(ValueType::kInt32, {Value::u8(1)}), "holds an element of type uint8"},
      {Value::array(ValueType::kArray, {Value::array(ValueType::kUInt8, {Value{ValueType::kUInt8, true}})}),
       "does not hold an unsigned integer"},
      {Value{static_cast<ValueType>(13), uint64_t{0}}, "unknown value type 13"},
  };
  for (const auto& [value, message] : cases) {
    const Error e = error_of([&] { w.set("k.bad", value); });
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path.str()), HasSubstr("key 'k.bad'"), HasSubstr(message)));
  }
}

TEST(GgufWriter, RefusesArraysNestedDeeperThanTheReaderAccepts) {
  ScratchPath path("gguf");
  Writer w(path.str());
  Value v = Value::array(ValueType::kUInt8, {});
  for (int depth = 1; depth < kMaxArrayNesting; ++depth) v = Value::array(ValueType::kArray, {v});
  w.set("ok", v);
  v = Value::array(ValueType::kArray, {v});
  EXPECT_THAT(error_of([&] { w.set("deep", v); }).what(), HasSubstr("nests arrays deeper than 8"));
}

TEST(GgufWriter, RefusesInvalidTensorDeclarations) {
  ScratchPath path("gguf");
  Writer w(path.str());
  w.add_tensor("t", TensorType::kF32, {1});
  const std::vector<std::tuple<std::string, TensorType, std::vector<int64_t>, std::string>> cases = {
      {"t", TensorType::kF32, {1}, "declared twice"},
      {"none", TensorType::kF32, {}, "0 dims"},
      {"five", TensorType::kF32, {1, 1, 1, 1, 1}, "5 dims"},
      {"block", TensorType::kPQ2_0, {100}, "ne[0] = 100 is not a multiple of the pq2_0 block size 128"},
      {"negative", TensorType::kF32, {4, -1}, "ne[1] = -1 is negative"},
      {"huge", TensorType::kF32, {1ll << 40, 1ll << 40}, "overflows"},
      {"bytes", TensorType::kF32, {1ll << 62}, "overflows"},
  };
  for (const auto& [name, type, ne, message] : cases) {
    const Error e = error_of([&, &name = name, &type = type, &ne = ne] { w.add_tensor(name, type, ne); });
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << name;
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path.str()), HasSubstr("'" + name + "'"), HasSubstr(message)));
  }
}

TEST(GgufWriter, EnforcesTheCallOrderAndTheDeclaredByteCounts) {
  ScratchPath path("gguf");
  Writer w(path.str());
  w.add_tensor("a", TensorType::kF16, {2});
  const std::vector<uint8_t> three(3, 1);
  EXPECT_THAT(error_of([&] { w.write(three); }).what(), HasSubstr("before begin_data()"));
  w.begin_data();
  EXPECT_THAT(error_of([&] { w.begin_data(); }).what(), HasSubstr("called twice"));
  EXPECT_THAT(error_of([&] { w.set("late", Value::u8(1)); }).what(), HasSubstr("after begin_data()"));
  EXPECT_THAT(error_of([&] { w.add_tensor("late", TensorType::kF32, {1}); }).what(),
              HasSubstr("after begin_data()"));
  w.write(std::span(three).first(1));
  const Error incomplete = error_of([&] { w.finish(); });
  EXPECT_EQ(incomplete.kind(), ErrorKind::kIo);
  EXPECT_THAT(incomplete.what(), AllOf(HasSubstr(path.str()), HasSubstr("tensor 'a' incomplete: 1 of 4")));
  const Error overflow = error_of([&] {
    w.write(three);
    w.write(three);
  });
  EXPECT_EQ(overflow.kind(), ErrorKind::kIo);
  EXPECT_THAT(overflow.what(), HasSubstr("past the last declared tensor"));
}

TEST(GgufWriter, ReportsUncreatableFilesAsIoErrors) {
  const std::string path = ::testing::TempDir() + "/no-such-dir/x.gguf";
  const Error e = error_of([&] { Writer w(path); });
  EXPECT_EQ(e.kind(), ErrorKind::kIo);
  EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("cannot create")));
}

TEST(GgufWriter, RefusesNonPowerOfTwoAlignment) {
  ScratchPath path("gguf");
  for (uint32_t alignment : {0u, 3u, 48u}) {
    const Error e = error_of([&] { Writer w(path.str(), alignment); });
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_THAT(e.what(), HasSubstr(fmt::format("alignment {} is not", alignment)));
  }
}

TEST(GgufWriter, AlignmentKeyMustAgreeWithTheWriter) {
  ScratchPath path("gguf");
  {
    Writer w(path.str(), 64);
    w.set("general.alignment", Value::u32(32));
    EXPECT_THAT(error_of([&] { w.begin_data(); }).what(),
                HasSubstr("disagrees with the writer's alignment 64"));
  }
  {
    Writer w(path.str(), 64);
    w.set("general.alignment", Value::u64(64));  // any integer width is fine when it agrees
    w.set("after", Value::u8(1));
    w.finish();
  }
  const Reader r = Reader::open(path.str());
  EXPECT_EQ(r.alignment(), 64u);
  EXPECT_EQ(r.metadata().front().first, "general.alignment");
}

TEST(GgufWriter, SetReplacesAKeyInPlace) {
  ScratchPath path("gguf");
  {
    Writer w(path.str());
    w.set("a", Value::u8(1));
    w.set("b", Value::u8(2));
    w.set("a", Value::string("again"));
    w.finish();
  }
  const Reader r = Reader::open(path.str());
  ASSERT_EQ(r.metadata().size(), 2u);
  EXPECT_EQ(r.metadata()[0].first, "a");
  EXPECT_EQ(r.get_string("a"), "again");
}

TEST(GgufWriter, AnUnfinishedWriterRemovesItsPartialFile) {
  ScratchPath path("gguf");
  {
    Writer w(path.str());
    w.add_tensor("a", TensorType::kF32, {4});
    w.begin_data();
    EXPECT_TRUE(std::filesystem::exists(path.str()));
  }
  EXPECT_FALSE(std::filesystem::exists(path.str()));
}

}  // namespace
}  // namespace tern::gguf
