// The corruption battery: hand-made GGUF bytes, each broken in one way, must be refused with a
// one-line Error(kFormat) naming the file, the section (header, key or tensor) and the byte offset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>

#include "core/error.h"
#include "gguf/reader.h"
#include "test_files.h"

namespace tern::gguf {
namespace {

using testing::error_of;
using testing::GgufBytes;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kFile[] = "bad.gguf";
constexpr uint32_t kF32 = 0;
constexpr uint32_t kPQ2_0 = 142;
constexpr uint32_t kString = 8;
constexpr uint32_t kArray = 9;
constexpr uint64_t kHuge = 1ull << 60;

GgufBytes header(uint64_t n_tensors, uint64_t n_kv) {
  GgufBytes b;
  b.raw("GGUF").u32(3).u64(n_tensors).u64(n_kv);
  return b;
}

GgufBytes& tensor_info(GgufBytes& b, std::string_view name, const std::vector<int64_t>& ne, uint32_t type,
                       uint64_t offset) {
  b.mark(std::string(name)).str(name).u32(static_cast<uint32_t>(ne.size()));
  for (int64_t n : ne) b.i64(n);
  return b.u32(type).u64(offset);
}

// One tensor (f32 [4, 2], 32 bytes) and its data. The name is long enough that a cut inside the
// shape leaves the 32 bytes the tensor count check asks for.
constexpr char kTensor[] = "blk.0.attn_q.weight";
GgufBytes one_tensor_file() {
  GgufBytes b = header(1, 0);
  tensor_info(b, kTensor, {4, 2}, kF32, 0).pad_to(32).mark("data").zeros(32);
  return b;
}

// A file with `n_tensors` tensor infos made by `infos` and `data_bytes` bytes of data.
GgufBytes tensors_file(uint64_t n_tensors, const std::function<void(GgufBytes&)>& infos, size_t data_bytes) {
  GgufBytes b = header(n_tensors, 0);
  infos(b);
  b.pad_to(32).mark("data").zeros(data_bytes);
  return b;
}

// A file with `n_kv` keys written by `keys` and no tensors.
GgufBytes keys_file(uint64_t n_kv, const std::function<void(GgufBytes&)>& keys) {
  GgufBytes b = header(0, n_kv);
  keys(b);
  return b;
}

std::vector<uint8_t> cut(const GgufBytes& b, size_t size) {
  return {b.bytes.begin(), b.bytes.begin() + size};
}

std::string at(std::string_view context, size_t byte) {
  return fmt::format("{} at byte {}: ", context, byte);
}

struct Corruption {
  std::string name;
  std::vector<uint8_t> bytes;
  std::vector<std::string> expected;  // substrings of the message, besides the file name
};

void PrintTo(const Corruption& c, std::ostream* os) {
  *os << c.name;
}

std::vector<Corruption> truncations() {
  std::vector<Corruption> out;
  const GgufBytes name_key = keys_file(1, [](GgufBytes& b) {
    b.mark("key").str("general.name").mark("type").u32(kString).mark("value").str(std::string(40, 'x'));
  });
  const GgufBytes array_key = keys_file(1, [](GgufBytes& b) {
    b.str("list").u32(kArray).mark("array").u32(4).mark("count").u64(10);
    for (uint32_t i = 0; i < 10; ++i) b.u32(i);
  });
  const GgufBytes tensor = one_tensor_file();
  const size_t ne_at = tensor.at(kTensor) + 8 + 19 + 4;
  GgufBytes long_name = header(1, 0);
  tensor_info(long_name, std::string(40, 't'), {4}, kF32, 0);
  out.push_back(
      {"InsideMagic", cut(name_key, 2), {at("header", 0) + "truncated magic: needs 4 bytes, 2 left"}});
  out.push_back({"InsideVersion", cut(name_key, 6), {at("header", 4) + "truncated version"}});
  out.push_back({"InsideTensorCount", cut(name_key, 11), {at("header", 8) + "truncated tensor count"}});
  out.push_back({"InsideKeyCount", cut(name_key, 20), {at("header", 16) + "truncated metadata key count"}});
  out.push_back({"InsideKeyCountBudget",
                 cut(name_key, 24 + 4),
                 {at("header", 16) + "metadata key count 1 cannot fit in the 4 bytes left"}});
  out.push_back({"InsideKey",
                 cut(name_key, 24 + 8 + 6),
                 {at("key #0", 24) + "key length 12 exceeds the 6 bytes left"}});
  out.push_back(
      {"InsideValueType",
       cut(name_key, name_key.at("type") + 2),
       {at("key 'general.name'", name_key.at("type")) + "truncated value type: needs 4 bytes, 2 left"}});
  out.push_back({"InsideStringValue",
                 cut(name_key, name_key.at("value") + 8 + 10),
                 {at("key 'general.name'", name_key.at("value")) +
                  "string value length 40 exceeds the 10 bytes left"}});
  out.push_back({"InsideArrayCount",
                 cut(array_key, array_key.at("count") + 3),
                 {at("key 'list'", array_key.at("count")) + "truncated array count"}});
  out.push_back({"InsideArrayElements",
                 cut(array_key, array_key.at("count") + 8 + 12),
                 {at("key 'list'", array_key.at("array")) +
                  "array of 10 uint32 values cannot fit in the 12 bytes left"}});
  out.push_back({"InsideTensorName",
                 cut(long_name, 24 + 8 + 30),
                 {at("tensor #0", 24) + "tensor name length 40 exceeds the 30 bytes left"}});
  out.push_back({"InsideTensorCountBudget",
                 cut(tensor, tensor.at(kTensor) + 8 + 10),
                 {at("header", 8) + "tensor count 1 cannot fit in the 18 bytes left"}});
  out.push_back({"InsideTensorShape",
                 cut(tensor, ne_at + 8 + 4),
                 {at("tensor 'blk.0.attn_q.weight'", ne_at + 8) + "truncated ne: needs 8 bytes, 4 left"}});
  out.push_back(
      {"InsideTensorOffset",
       cut(tensor, ne_at + 16 + 4 + 5),
       {at("tensor 'blk.0.attn_q.weight'", ne_at + 20) + "truncated tensor offset: needs 8 bytes, 5 left"}});
  out.push_back(
      {"InsideData",
       cut(tensor, tensor.at("data") + 16),
       {fmt::format(
           "tensor 'blk.0.attn_q.weight' at byte 24: data [{}, {}) extends past end of file (size {})",
           tensor.at("data"), tensor.at("data") + 32, tensor.at("data") + 16)}});
  return out;
}

std::vector<Corruption> header_and_key_corruptions() {
  std::vector<Corruption> out;
  GgufBytes wrong_magic = header(0, 0);
  wrong_magic.bytes[3] = 'G';
  out.push_back({"WrongMagic", wrong_magic.bytes, {at("header", 0) + "bad magic GGUG"}});
  GgufBytes v2 = header(0, 0);
  v2.bytes[4] = 2;
  out.push_back({"WrongVersion", v2.bytes, {at("header", 4) + "unsupported GGUF version 2"}});
  out.push_back(
      {"AbsurdKeyCount",
       header(0, kHuge).zeros(64).bytes,
       {at("header", 16) + "metadata key count 1152921504606846976 cannot fit in the 64 bytes left"}});
  out.push_back({"AbsurdTensorCount",
                 header(kHuge, 0).zeros(64).bytes,
                 {at("header", 8) + "tensor count 1152921504606846976 cannot fit"}});
  out.push_back({"AbsurdKeyLength",
                 keys_file(1, [](GgufBytes& b) { b.u64(kHuge).zeros(64); }).bytes,
                 {at("key #0", 24) + "key length 1152921504606846976 exceeds the 64 bytes left"}});
  out.push_back({"AbsurdStringLength",
                 keys_file(1, [](GgufBytes& b) { b.str("s").u32(kString).u64(kHuge).zeros(16); }).bytes,
                 {at("key 's'", 24 + 9 + 4) + "string value length 1152921504606846976 exceeds"}});
  out.push_back({"AbsurdArrayCount",
                 keys_file(1, [](GgufBytes& b) { b.str("a").u32(kArray).u32(0).u64(kHuge).zeros(16); }).bytes,
                 {at("key 'a'", 24 + 9 + 4) + "array of 1152921504606846976 uint8 values cannot fit"}});
  out.push_back({"AbsurdNestedArrayCount",
                 keys_file(1,
                           [](GgufBytes& b) {
                             b.str("a").u32(kArray).u32(kArray).u64(1).u32(kString).u64(kHuge).zeros(16);
                           })
                     .bytes,
                 {at("key 'a'", 24 + 9 + 4 + 12) + "array of 1152921504606846976 string values"}});
  out.push_back({"UnknownValueType",
                 keys_file(1, [](GgufBytes& b) { b.str("k").u32(13).zeros(16); }).bytes,
                 {at("key 'k'", 24 + 9) + "unknown value type 13"}});
  out.push_back({"UnknownArrayElementType",
                 keys_file(1, [](GgufBytes& b) { b.str("k").u32(kArray).u32(99).u64(0); }).bytes,
                 {at("key 'k'", 24 + 9 + 4) + "unknown array element type 99"}});
  out.push_back(
      {"BoolByteTwo",
       keys_file(2, [](GgufBytes& b) { b.str("ok").u32(7).u8(1).mark("k").str("flag").u32(7).u8(2); }).bytes,
       {at("key 'flag'", 24 + 10 + 4 + 1 + 12 + 4) + "bool byte 2 is neither 0 nor 1"}});
  out.push_back({"ArraysNestedNineDeep",
                 keys_file(1,
                           [](GgufBytes& b) {
                             b.str("n").u32(kArray);
                             for (int i = 0; i < 8; ++i) b.u32(kArray).u64(1);
                             b.u32(0).u64(0);
                           })
                     .bytes,
                 {at("key 'n'", 24 + 9 + 4 + 8 * 12) + "arrays nested deeper than 8 levels"}});
  out.push_back({"DuplicateKey",
                 keys_file(2, [](GgufBytes& b) { b.str("k").u32(0).u8(1).str("k").u32(0).u8(2); }).bytes,
                 {at("key 'k'", 24 + 9 + 4 + 1) + "duplicate key (first defined as key #0)"}});
  out.push_back({"UnprintableKeyIsEscaped",
                 keys_file(1, [](GgufBytes& b) { b.str("a\nb\\").u32(77).zeros(16); }).bytes,
                 {"key 'a\\x0ab\\x5c' at byte 36: unknown value type 77"}});
  const auto alignment_file = [](std::function<void(GgufBytes&)> value) {
    return keys_file(1, [&](GgufBytes& b) { value(b.str("general.alignment")); }).bytes;
  };
  const std::string alignment_at = at("key 'general.alignment'", 24);
  out.push_back({"AlignmentNotPowerOfTwo",
                 alignment_file([](GgufBytes& b) { b.u32(4).u32(48); }),
                 {alignment_at + "alignment 48 is not a non-zero power of two"}});
  out.push_back({"AlignmentZero",
                 alignment_file([](GgufBytes& b) { b.u32(4).u32(0); }),
                 {alignment_at + "alignment 0 is not a non-zero power of two"}});
  out.push_back({"AlignmentNegative",
                 alignment_file([](GgufBytes& b) { b.u32(5).u32(static_cast<uint32_t>(-32)); }),
                 {alignment_at + "alignment -32 is not"}});
  out.push_back({"AlignmentBeyondUint32",
                 alignment_file([](GgufBytes& b) { b.u32(10).u64(1ull << 32); }),
                 {alignment_at + "alignment 4294967296 is not"}});
  out.push_back({"AlignmentNotAnInteger",
                 alignment_file([](GgufBytes& b) { b.u32(kString).str("32"); }),
                 {alignment_at + "alignment has type string, expected an integer"}});
  return out;
}

std::vector<Corruption> tensor_corruptions() {
  std::vector<Corruption> out;
  const auto single = [](const std::vector<int64_t>& ne, uint32_t type, uint64_t offset, size_t data) {
    return tensors_file(
               1, [&](GgufBytes& b) { tensor_info(b, "w", ne, type, offset); }, data)
        .bytes;
  };
  const std::string w_at = "tensor 'w' at byte ";
  out.push_back({"AbsurdTensorNameLength",
                 tensors_file(
                     1, [](GgufBytes& b) { b.u64(kHuge).zeros(40); }, 0)
                     .bytes,
                 {at("tensor #0", 24) + "tensor name length 1152921504606846976 exceeds"}});
  out.push_back({"UnknownTensorType",
                 single({4}, 99, 0, 32),
                 {at("tensor 'w'", 24 + 9 + 4 + 8) + "unknown tensor type id 99"}});
  out.push_back({"AmbiguousOrForeignTensorType", single({256}, 34, 0, 64), {"unknown tensor type id 34"}});
  out.push_back({"ZeroDims",
                 tensors_file(
                     1, [](GgufBytes& b) { b.str("w").u32(0).u32(kF32).u64(0).zeros(8); }, 32)
                     .bytes,
                 {at("tensor 'w'", 24 + 9) + "n_dims 0 is not in 1..4"}});
  out.push_back({"FiveDims",
                 single({1, 1, 1, 1, 1}, kF32, 0, 32),
                 {at("tensor 'w'", 24 + 9) + "n_dims 5 is not in 1..4"}});
  out.push_back({"NegativeNe",
                 single({4, -2}, kF32, 0, 32),
                 {at("tensor 'w'", 24 + 9 + 4 + 8) + "ne[1] = -2 is negative"}});
  out.push_back({"OverflowingNe",
                 single({1ll << 32, 1ll << 32}, kF32, 0, 32),
                 {at("tensor 'w'", 24 + 9 + 4 + 8) + "element count overflows int64 at ne[1]"}});
  out.push_back({"OverflowingNeBehindAZero",
                 single({0, 1ll << 32, 1ll << 32}, kF32, 0, 32),
                 {"element count overflows int64 at ne[2]"}});
  out.push_back({"OverflowingByteSize",
                 single({1ll << 62}, kF32, 0, 32),
                 {"byte size of 4611686018427387904 f32 values overflows"}});
  out.push_back(
      {"NeNotAMultipleOfTheBlock",
       single({100}, kPQ2_0, 0, 64),
       {at("tensor 'w'", 24 + 9 + 4 + 8) + "ne[0] = 100 is not a multiple of the pq2_0 block size 128"}});
  out.push_back({"MisalignedOffset",
                 single({4}, kF32, 16, 64),
                 {at("tensor 'w'", 24 + 9 + 4 + 8 + 4) + "offset 16 is not a multiple of the alignment 32"}});
  out.push_back({"OutOfFileTensor",
                 single({8}, kF32, 1024, 64),
                 {w_at + "24: data [1088, 1120) extends past end of file (size 128)"}});
  out.push_back({"OffsetNearUint64Max",
                 single({8}, kF32, ~uint64_t{31}, 64),
                 {w_at + "24: data [18446744073709551615, 18446744073709551615) extends past end of file"}});
  const auto pair = [](uint64_t offset_b, std::string_view name_b) {
    return tensors_file(
               2,
               [&](GgufBytes& b) {
                 tensor_info(b, "a", {16}, kF32, 0);
                 tensor_info(b, name_b, {8}, kF32, offset_b);
               },
               96)
        .bytes;
  };
  // Infos: 24-byte header, 'a' at 24 (33 bytes), 'b' at 57 (33 bytes); data starts at 96.
  out.push_back({"OverlappingTensors",
                 pair(32, "b"),
                 {"tensor 'b' at byte 57: data [128, 160) overlaps tensor 'a' data [96, 160)"}});
  out.push_back({"TensorsAtTheSameOffset",
                 pair(0, "b"),
                 {"tensor 'b' at byte 57: data [96, 128) overlaps tensor 'a'"}});
  out.push_back({"DuplicateTensorName",
                 pair(64, "a"),
                 {"tensor 'a' at byte 57: duplicate tensor name (first is tensor #0)"}});
  return out;
}

std::vector<Corruption> all_corruptions() {
  std::vector<Corruption> out = truncations();
  for (auto& c : header_and_key_corruptions()) out.push_back(std::move(c));
  for (auto& c : tensor_corruptions()) out.push_back(std::move(c));
  return out;
}

class GgufCorruption : public ::testing::TestWithParam<Corruption> {};

TEST_P(GgufCorruption, IsRefusedWithAMessageSayingWhereAndWhat) {
  const Corruption& c = GetParam();
  const Error e = error_of([&] { Reader::parse(c.bytes, kFile); });
  EXPECT_EQ(e.kind(), ErrorKind::kFormat);
  EXPECT_THAT(e.what(), HasSubstr(std::string(kFile) + ": "));
  EXPECT_THAT(e.what(), Not(HasSubstr("\n")));
  for (const std::string& part : c.expected) EXPECT_THAT(e.what(), HasSubstr(part));
}

INSTANTIATE_TEST_SUITE_P(Battery, GgufCorruption, ::testing::ValuesIn(all_corruptions()),
                         [](const auto& test) { return test.param.name; });

TEST(GgufCorruptionBase, TheUncorruptedFilesParse) {
  const GgufBytes tensor = one_tensor_file();
  const Reader r = Reader::parse(tensor.bytes, kFile);
  EXPECT_EQ(r.data_offset(), tensor.at("data"));
  EXPECT_EQ(r.tensor(kTensor).nbytes, 32u);
  const auto pair = tensors_file(
      2,
      [](GgufBytes& b) {
        tensor_info(b, "a", {16}, kF32, 0);
        tensor_info(b, "b", {8}, kF32, 64);
      },
      96);
  EXPECT_EQ(Reader::parse(pair.bytes, kFile).tensor("b").data.data(),
            pair.bytes.data() + pair.at("data") + 64);
  const auto aligned = keys_file(1, [](GgufBytes& b) { b.str("general.alignment").u32(4).u32(64); });
  EXPECT_EQ(Reader::parse(aligned.bytes, kFile).alignment(), 64u);
}

TEST(GgufCorruptionBase, EveryStrictPrefixOfAValidFileIsRefused) {
  GgufBytes b = header(2, 3);
  b.str("general.name").u32(kString).str("tiny");
  b.str("tiny.list").u32(kArray).u32(5).u64(3).u32(1).u32(2).u32(3);
  b.str("tiny.flag").u32(7).u8(1);
  tensor_info(b, "a", {4, 2}, kF32, 0);
  tensor_info(b, "b", {128}, kPQ2_0, 32);
  b.pad_to(32).zeros(32 + 34);
  ASSERT_NO_THROW(Reader::parse(b.bytes, kFile));
  for (size_t size = 0; size < b.bytes.size(); ++size) {
    const Error e = error_of([&] { Reader::parse(cut(b, size), kFile); });
    EXPECT_EQ(e.kind(), ErrorKind::kFormat) << size;
    EXPECT_THAT(e.what(), HasSubstr("bad.gguf: ")) << size;
    EXPECT_THAT(e.what(), HasSubstr(" at byte ")) << size;
  }
}

TEST(GgufCorruptionBase, AlignmentKeyGovernsOffsetsAndDataStart) {
  GgufBytes b = header(1, 1);
  b.str("general.alignment").u32(4).u32(64);
  tensor_info(b, "w", {4}, kF32, 64);
  b.pad_to(64).mark("data").zeros(64 + 16);
  const Reader r = Reader::parse(b.bytes, kFile);
  EXPECT_EQ(r.data_offset(), 128u);
  EXPECT_EQ(r.tensor("w").data.data(), b.bytes.data() + 128 + 64);
  b.bytes[b.at("w") + 8 + 1 + 4 + 8 + 4] = 32;  // offset 32: aligned to 32 but not to 64
  EXPECT_THAT(error_of([&] { Reader::parse(b.bytes, kFile); }).what(),
              HasSubstr("offset 32 is not a multiple of the alignment 64"));
}

}  // namespace
}  // namespace tern::gguf
