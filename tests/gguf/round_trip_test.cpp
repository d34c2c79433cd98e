#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "test_files.h"

namespace tern::gguf {
namespace {

using quant::TensorType;
using testing::read_bytes;
using testing::ScratchPath;

Value nested(int depth) {
  if (depth == 0) return Value::i32_array({depth, 1});
  return Value::array(ValueType::kArray, {nested(depth - 1), Value::array(ValueType::kArray, {})});
}

// Every value type at its edges, empty strings and arrays, and arrays of arrays.
std::vector<std::pair<std::string, Value>> sample_metadata() {
  return {
      {"general.architecture", Value::string("qwen35")},
      {"t.u8", Value::u8(255)},
      {"t.i8", Value::i8(-128)},
      {"t.u16", Value::u16(65535)},
      {"t.i16", Value::i16(-32768)},
      {"t.u32", Value::u32(4294967295u)},
      {"t.i32", Value::i32(std::numeric_limits<int32_t>::min())},
      {"t.u64", Value::u64(std::numeric_limits<uint64_t>::max())},
      {"t.i64", Value::i64(std::numeric_limits<int64_t>::min())},
      {"t.f32", Value::f32(-0.0f)},
      {"t.f32_inf", Value::f32(std::numeric_limits<float>::infinity())},
      {"t.f32_tiny", Value::f32(std::numeric_limits<float>::denorm_min())},
      {"t.f64", Value::f64(1e-310)},
      {"t.true", Value::boolean(true)},
      {"t.false", Value::boolean(false)},
      {"t.empty_string", Value::string("")},
      {"t.odd_string", Value::string(std::string("nul\0inside \xe2\x86\x92 utf-8", 20))},
      {"t.empty_u8_array", Value::array(ValueType::kUInt8, {})},
      {"t.empty_string_array", Value::string_array({})},
      {"t.bools", Value::array(ValueType::kBool, {Value::boolean(true), Value::boolean(false)})},
      {"t.strings", Value::string_array({"", "a", "bc"})},
      {"t.f64s", Value::array(ValueType::kFloat64, {Value::f64(0.1), Value::f64(-3.5)})},
      {"t.u64s", Value::array(ValueType::kUInt64, {Value::u64(1), Value::u64(1ull << 63)})},
      {"t.i16s", Value::array(ValueType::kInt16, {Value::i16(-1), Value::i16(2)})},
      {"t.nested", Value::array(ValueType::kArray, {Value::i32_array({1, 2}), Value::i32_array({}),
                                                    Value::string_array({"x"})})},
      {"t.deepest", nested(kMaxArrayNesting - 1)},
  };
}

struct TensorDecl {
  std::string name;
  TensorType type;
  std::vector<int64_t> ne;
};

std::vector<TensorDecl> sample_tensors() {
  return {
      {"f32", TensorType::kF32, {4, 3}},     {"empty", TensorType::kF32, {0, 5}},
      {"f16", TensorType::kF16, {9}},        {"bf16", TensorType::kBF16, {2, 2, 2, 2}},
      {"pq2", TensorType::kPQ2_0, {256, 3}}, {"ptq1", TensorType::kPTQ1_0, {128, 2, 1}},
      {"q2", TensorType::kQ2_0, {64}},
  };
}

uint8_t pattern(size_t tensor, uint64_t i) {
  return static_cast<uint8_t>(i * 31 + tensor * 7 + 1);
}

// Writes metadata and tensors, feeding the data in `chunk`-byte pieces that straddle tensors.
void write_sample(const std::string& path, uint32_t alignment, size_t chunk) {
  Writer w(path, alignment);
  for (auto& [key, value] : sample_metadata()) w.set(key, value);
  for (const auto& t : sample_tensors()) w.add_tensor(t.name, t.type, t.ne);
  w.begin_data();
  std::vector<uint8_t> all;
  for (size_t t = 0; t < w.tensor_count(); ++t) {
    for (uint64_t i = 0; i < w.tensor_bytes(t); ++i) all.push_back(pattern(t, i));
  }
  for (size_t at = 0; at < all.size(); at += chunk) {
    w.write(std::span(all).subspan(at, std::min(chunk, all.size() - at)));
  }
  w.finish();
}

class GgufRoundTrip : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GgufRoundTrip, WrittenFileParsesBackIdentically) {
  const uint32_t alignment = GetParam();
  ScratchPath path("gguf");
  write_sample(path.str(), alignment, 7);

  const Reader r = Reader::open(path.str());
  EXPECT_EQ(r.version(), 3u);
  EXPECT_EQ(r.alignment(), alignment);
  EXPECT_EQ(r.data_offset() % alignment, 0u);

  auto expected = sample_metadata();
  if (alignment != kDefaultAlignment) expected.emplace_back("general.alignment", Value::u32(alignment));
  ASSERT_EQ(r.metadata().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r.metadata()[i].first, expected[i].first);
    EXPECT_TRUE(r.metadata()[i].second == expected[i].second) << expected[i].first;
  }
  EXPECT_TRUE(std::signbit(r.get_float("t.f32")));

  const auto decls = sample_tensors();
  ASSERT_EQ(r.tensors().size(), decls.size());
  for (size_t t = 0; t < decls.size(); ++t) {
    const TensorInfo& info = r.tensors()[t];
    SCOPED_TRACE(info.name);
    EXPECT_EQ(info.name, decls[t].name);
    EXPECT_EQ(info.type, decls[t].type);
    ASSERT_EQ(info.n_dims, decls[t].ne.size());
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(info.ne[d], d < decls[t].ne.size() ? decls[t].ne[d] : 1);
    EXPECT_EQ(info.offset % alignment, 0u);
    const size_t row = *quant::row_bytes(info.type, info.ne[0]);
    ASSERT_EQ(info.nbytes, row * static_cast<uint64_t>(info.rows()));
    ASSERT_EQ(info.data.size(), info.nbytes);
    EXPECT_EQ(info.data.data(), r.tensor(info.name).data.data());
    for (uint64_t i = 0; i < info.nbytes; ++i) ASSERT_EQ(info.data[i], pattern(t, i)) << "byte " << i;
  }
}

TEST_P(GgufRoundTrip, RewritingAReadFileReproducesItsBytes) {
  ScratchPath first("first.gguf");
  ScratchPath second("second.gguf");
  write_sample(first.str(), GetParam(), 4096);
  const Reader r = Reader::open(first.str());

  Writer w(second.str(), r.alignment());
  for (const auto& [key, value] : r.metadata()) w.set(key, value);
  for (const TensorInfo& t : r.tensors()) {
    w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims));
  }
  w.begin_data();
  for (const TensorInfo& t : r.tensors()) w.write(t.data);
  w.finish();

  EXPECT_EQ(read_bytes(second.str()), read_bytes(first.str()));
}

TEST_P(GgufRoundTrip, ChunkSizeDoesNotChangeTheFile) {
  ScratchPath bytewise("bytewise.gguf");
  ScratchPath whole("whole.gguf");
  write_sample(bytewise.str(), GetParam(), 1);
  write_sample(whole.str(), GetParam(), 1 << 20);
  EXPECT_EQ(read_bytes(bytewise.str()), read_bytes(whole.str()));
}

INSTANTIATE_TEST_SUITE_P(Alignments, GgufRoundTrip, ::testing::Values(32u, 1u, 64u, 4096u));

TEST(GgufRoundTrip, MetadataOnlyFileNeedsNoBeginData) {
  ScratchPath path("gguf");
  {
    Writer w(path.str());
    w.set("general.name", Value::string("none"));
    w.finish();
  }
  const Reader r = Reader::open(path.str());
  EXPECT_EQ(r.get_string("general.name"), "none");
  EXPECT_TRUE(r.tensors().empty());
  EXPECT_EQ(r.data_offset(), r.file_size());
  EXPECT_FALSE(r.has("general.alignment"));
}

TEST(GgufRoundTrip, EveryTensorAndTheHeaderArePaddedToTheAlignment) {
  ScratchPath path("gguf");
  {
    Writer w(path.str(), 64);
    w.add_tensor("a", TensorType::kF32, {3});
    w.add_tensor("b", TensorType::kF16, {5});
    w.begin_data();
    const std::vector<uint8_t> bytes(22, 0xab);
    w.write(bytes);
    w.finish();
  }
  const Reader r = Reader::open(path.str());
  EXPECT_EQ(r.tensor("a").offset, 0u);
  EXPECT_EQ(r.tensor("b").offset, 64u);
  EXPECT_EQ(r.file_size(), r.data_offset() + 128);
  const auto file = read_bytes(path.str());
  for (uint64_t i = r.data_offset() + 12; i < r.data_offset() + 64; ++i) EXPECT_EQ(file[i], 0) << i;
}

}  // namespace
}  // namespace tern::gguf
