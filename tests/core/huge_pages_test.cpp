#include "core/huge_pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.h"

namespace tern {
namespace {

TEST(HugePageBuffer, RoundsUpToWholeHugePagesZeroFilledAndWritable) {
  HugePageBuffer buffer = HugePageBuffer::allocate(kHugePageBytes + 1, "test");
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 2 * kHugePageBytes);
  EXPECT_TRUE(std::all_of(buffer.data(), buffer.data() + buffer.size(), [](uint8_t b) { return b == 0; }));
  buffer.data()[buffer.size() - 1] = 7;
  EXPECT_EQ(buffer.data()[buffer.size() - 1], 7);
}

TEST(HugePageBuffer, EmptyRequestMapsNothing) {
  const HugePageBuffer buffer = HugePageBuffer::allocate(0, "test");
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
}

TEST(HugePageBuffer, MoveTransfersOwnership) {
  HugePageBuffer a = HugePageBuffer::allocate(100, "test");
  uint8_t* const data = a.data();
  HugePageBuffer b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  a = std::move(b);
  EXPECT_EQ(a.data(), data);
}

TEST(HugePageBuffer, ImpossibleSizeIsAnErrorNamingWhat) {
  try {
    (void)HugePageBuffer::allocate(size_t{1} << 62, "weights of m.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weights of m.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tern
