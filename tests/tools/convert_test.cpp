#include "tools/convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "gguf/reader.h"
#include "hadamard/contract.h"
#include "model/config.h"
#include "quant/codec.h"
#include "tests/support/tiny_qwen35.h"

namespace tern::tools {
namespace {

using quant::TensorType;
using ::testing::HasSubstr;
using testing::TempFile;
using testing::TinyQwen35;

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> dequantized(const gguf::TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.elements()));
  const size_t row = *quant::row_bytes(t.type, t.ne[0]);
  for (int64_t r = 0; r < t.rows(); ++r) {
    quant::dequantize_row(t.type, t.data.data() + static_cast<size_t>(r) * row,
                          out.data() + static_cast<size_t>(r * t.ne[0]), t.ne[0]);
  }
  return out;
}

class Convert : public ::testing::Test {
 protected:
  void SetUp() override {
    TinyQwen35 model;
    model.make();
    model.write(source_.path());
  }
  // Checks that `converted` holds `source` with every ternary tensor re-packed to `target`.
  static void expect_converted(const gguf::Reader& source, const gguf::Reader& converted, TensorType target,
                               uint64_t file_type) {
    ASSERT_EQ(converted.metadata().size(), source.metadata().size());
    for (size_t i = 0; i < source.metadata().size(); ++i) {
      const auto& [key, value] = source.metadata()[i];
      EXPECT_EQ(converted.metadata()[i].first, key);
      if (key != "general.file_type") {
        EXPECT_EQ(converted.metadata()[i].second.type, value.type) << key;
        EXPECT_EQ(converted.metadata()[i].second.data, value.data) << key;
      }
    }
    EXPECT_EQ(converted.get_uint("general.file_type"), file_type);
    ASSERT_EQ(converted.tensors().size(), source.tensors().size());
    for (size_t i = 0; i < source.tensors().size(); ++i) {
      const gguf::TensorInfo& a = source.tensors()[i];
      const gguf::TensorInfo& b = converted.tensors()[i];
      EXPECT_EQ(b.name, a.name);
      EXPECT_EQ(b.ne, a.ne);
      if (quant::is_ternary(a.type)) {
        EXPECT_EQ(b.type, target) << a.name;
        EXPECT_EQ(dequantized(b), dequantized(a)) << a.name;
      } else {
        EXPECT_EQ(b.type, a.type) << a.name;
        EXPECT_TRUE(std::ranges::equal(b.data, a.data)) << a.name;
      }
    }
    // The converted file is a loadable model with the same contract.
    EXPECT_NO_THROW(model::read_config(converted));
    EXPECT_EQ(hadamard::read_contract(converted)->weight_names,
              hadamard::read_contract(source)->weight_names);
  }

  TempFile source_{"source.gguf"};
  TempFile output_{"output.gguf"};
};

TEST_F(Convert, RepacksToPtq1) {
  const ConvertSummary s = convert_model(source_.path(), output_.path(), TensorType::kPTQ1_0);
  EXPECT_EQ(s.repacked_tensors, 27);
  EXPECT_EQ(s.copied_tensors, 29);
  EXPECT_EQ(s.output_bytes, std::filesystem::file_size(output_.path()));
  EXPECT_LT(s.output_bytes, s.input_bytes);
  expect_converted(gguf::Reader::open(source_.path()), gguf::Reader::open(output_.path()),
                   TensorType::kPTQ1_0, 143);
}

TEST_F(Convert, RepacksToGroup64Q2) {
  convert_model(source_.path(), output_.path(), TensorType::kQ2_0);
  expect_converted(gguf::Reader::open(source_.path()), gguf::Reader::open(output_.path()), TensorType::kQ2_0,
                   41);
}

TEST_F(Convert, RoundTripThroughPtq1AndQ2IsByteIdentical) {
  const TempFile middle("middle.gguf");
  const TempFile q2("q2.gguf");
  convert_model(source_.path(), middle.path(), TensorType::kPTQ1_0);
  convert_model(middle.path(), q2.path(), TensorType::kQ2_0);
  convert_model(q2.path(), output_.path(), TensorType::kPQ2_0);
  EXPECT_EQ(file_bytes(output_.path()), file_bytes(source_.path()));
}

TEST_F(Convert, RefusesANonTernaryTarget) {
  try {
    convert_model(source_.path(), output_.path(), TensorType::kF16);
    ADD_FAILURE() << "converted a folded model to f16";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_THAT(e.what(), HasSubstr("f16 is not ternary"));
  }
  EXPECT_FALSE(std::filesystem::exists(output_.path()));
}

TEST_F(Convert, RefusesCodeThreeForPtq1AndLeavesNoOutput) {
  uint64_t offset = 0;
  {
    const gguf::Reader reader = gguf::Reader::open(source_.path());
    const gguf::TensorInfo& t = reader.tensor("blk.1.ffn_up.weight");
    offset = reader.data_offset() + t.offset + 2 + 5;  // a qs byte of the first PQ2_0 block
  }
  {
    std::fstream f(source_.path(), std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(0xFF));  // four codes of 3 (+2d)
  }
  try {
    convert_model(source_.path(), output_.path(), TensorType::kPTQ1_0);
    ADD_FAILURE() << "clamped code 3 silently";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("blk.1.ffn_up.weight"));
  }
  EXPECT_FALSE(std::filesystem::exists(output_.path()));
}

TEST_F(Convert, RefusesWritingOverTheInput) {
  EXPECT_THROW(convert_model(source_.path(), source_.path(), TensorType::kPTQ1_0), Error);
  EXPECT_NO_THROW(gguf::Reader::open(source_.path()));
}

TEST_F(Convert, CliWritesTheFile) {
  const std::string command = std::string(TERN_BINARY) + " convert " + source_.path() + " " + output_.path() +
                              " --type ptq1_0 > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(gguf::Reader::open(output_.path()).get_uint("general.file_type"), 143u);
}

}  // namespace
}  // namespace tern::tools
