#include "gguf/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>

#include "core/error.h"
#include "gguf/writer.h"
#include "test_files.h"

namespace tern::gguf {
namespace {

using ::testing::AllOf;
using testing::error_of;
using ::testing::HasSubstr;
using testing::ScratchPath;

class GgufGetters : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      Writer w(path_.str());
      w.set("u8", Value::u8(7));
      w.set("i8", Value::i8(-3));
      w.set("i32", Value::i32(1000));
      w.set("u64_max", Value::u64(std::numeric_limits<uint64_t>::max()));
      w.set("f32", Value::f32(0.25f));
      w.set("f64", Value::f64(-1.5));
      w.set("flag", Value::boolean(true));
      w.set("name", Value::string("tiny"));
      w.set("list", Value::i32_array({1, 2}));
      w.add_tensor("w", quant::TensorType::kF32, {2});
      w.begin_data();
      const std::vector<uint8_t> data(8, 0);
      w.write(data);
      w.finish();
    }
    reader_ = std::make_unique<Reader>(Reader::open(path_.str()));
  }

  void expect_config_error(const std::function<void()>& f, const std::string& key, const std::string& why) {
    const Error e = error_of(f);
    EXPECT_EQ(e.kind(), ErrorKind::kConfig);
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path_.str()), HasSubstr("key '" + key + "'"), HasSubstr(why)));
  }

  ScratchPath path_{"gguf"};
  std::unique_ptr<Reader> reader_;
};

TEST_F(GgufGetters, IntegerGettersAcceptEveryWidthThatFits) {
  const Reader& r = *reader_;
  EXPECT_EQ(r.get_uint("u8"), 7u);
  EXPECT_EQ(r.get_int("u8"), 7);
  EXPECT_EQ(r.get_uint("i32"), 1000u);
  EXPECT_EQ(r.get_int("i8"), -3);
  EXPECT_EQ(r.get_uint("u64_max"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r.get_uint_or("i32"), 1000u);
  EXPECT_EQ(r.get_uint_or("absent"), std::nullopt);
}

TEST_F(GgufGetters, OtherGettersReturnTheirValue) {
  const Reader& r = *reader_;
  EXPECT_EQ(r.get_float("f32"), 0.25);
  EXPECT_EQ(r.get_float("f64"), -1.5);
  EXPECT_TRUE(r.get_bool("flag"));
  EXPECT_EQ(r.get_string("name"), "tiny");
  EXPECT_EQ(r.get_array("list").items.size(), 2u);
  EXPECT_TRUE(r.has("list"));
  EXPECT_EQ(r.find("missing"), nullptr);
}

TEST_F(GgufGetters, WrongTypesAndMissingKeysAreConfigErrorsNamingFileAndKey) {
  const Reader& r = *reader_;
  expect_config_error([&] { r.get_uint("i8"); }, "i8", "-3 is negative");
  expect_config_error([&] { r.get_uint_or("i8"); }, "i8", "-3 is negative");
  expect_config_error([&] { r.get_int("u64_max"); }, "u64_max", "does not fit in int64");
  expect_config_error([&] { r.get_uint("name"); }, "name", "has type string, expected an integer");
  expect_config_error([&] { r.get_float("u8"); }, "u8", "has type uint8, expected a float");
  expect_config_error([&] { r.get_bool("u8"); }, "u8", "expected a bool");
  expect_config_error([&] { r.get_string("list"); }, "list", "has type array, expected a string");
  expect_config_error([&] { r.get_array("name"); }, "name", "expected an array");
  expect_config_error([&] { r.get_uint("nope"); }, "nope", "is missing");
}

TEST_F(GgufGetters, TensorLookup) {
  const Reader& r = *reader_;
  ASSERT_NE(r.find_tensor("w"), nullptr);
  EXPECT_EQ(r.tensor("w").nbytes, 8u);
  EXPECT_EQ(r.find_tensor("x"), nullptr);
  const Error e = error_of([&] { r.tensor("x"); });
  EXPECT_EQ(e.kind(), ErrorKind::kFormat);
  EXPECT_THAT(e.what(), AllOf(HasSubstr(path_.str()), HasSubstr("no tensor 'x'")));
}

TEST(GgufReader, OpeningAMissingFileIsAnIoError) {
  const std::string path = ::testing::TempDir() + "/does-not-exist.gguf";
  const Error e = error_of([&] { Reader::open(path); });
  EXPECT_EQ(e.kind(), ErrorKind::kIo);
  EXPECT_THAT(e.what(), HasSubstr(path));
}

}  // namespace
}  // namespace tern::gguf
