#include "core/npy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace tern {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

TEST(Npy, RoundTripsShapeAndValues) {
  const std::string path = temp_path("npy_round_trip.npy");
  const std::vector<float> values = {1.0f, -2.5f, 3.25f, 1e-30f, -0.0f, 7.0f};
  write_npy(path, values, {2, 3});
  const NpyArray back = read_npy(path);
  EXPECT_EQ(back.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back.data, values);
  // v1.0 layout: magic, version 1.0, header padded so the data starts on a 64-byte boundary.
  EXPECT_EQ((std::filesystem::file_size(path) - values.size() * 4) % 64, 0u);
  std::ifstream in(path, std::ios::binary);
  std::string start(128, '\0');
  in.read(start.data(), 128);
  EXPECT_EQ(start.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(start.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Npy, StreamsRowsAndChecksTheCount) {
  const std::string path = temp_path("npy_stream.npy");
  {
    NpyWriter writer(path, {3});
    writer.write(std::vector<float>{1.0f, 2.0f});
    writer.write(std::vector<float>{3.0f});
    writer.finish();
  }
  const NpyArray back = read_npy(path);
  EXPECT_EQ(back.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(back.data, (std::vector<float>{1.0f, 2.0f, 3.0f}));
  NpyWriter short_writer(path, {2, 2});
  short_writer.write(std::vector<float>{1.0f});
  EXPECT_THROW(short_writer.finish(), Error);
  std::filesystem::remove(path);
}

TEST(Npy, RejectsMalformedFiles) {
  const std::string path = temp_path("npy_bad.npy");
  write_npy(path, std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 4);
  EXPECT_THROW(read_npy(path), Error);  // data shorter than the shape
  std::ofstream(path, std::ios::binary) << "not numpy at all";
  EXPECT_THROW(read_npy(path), Error);
  std::ofstream(path, std::ios::binary) << std::string("\x93NUMPY\x01\x00\xff\xff", 10);
  EXPECT_THROW(read_npy(path), Error);  // header length beyond the file
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tern
