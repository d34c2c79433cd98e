#include "core/huge_pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
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
  // Within a huge page of the address space's end: rounding up to whole pages wrapped to 0 bytes.
  try {
    (void)HugePageBuffer::allocate(std::numeric_limits<size_t>::max(), "probe");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot map 18446744073709551615 bytes"), std::string::npos)
        << e.what();
  }
}

// The VmFlags line of the mapping that holds p (/proc/self/smaps), or "" if none does.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {  // a mapping's first line
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(StreamedVector, LargeBlocksAreAdvisedHugePagesSmallOnesAreNot) {
  StreamedVector<float> large(kHugePageBytes / sizeof(float) + 3, 1.5f);
  EXPECT_EQ(std::accumulate(large.begin(), large.end(), 0.0), 1.5 * static_cast<double>(large.size()));
  EXPECT_NE(vm_flags_of(large.data()).find(" hg"), std::string::npos) << vm_flags_of(large.data());
  StreamedVector<float> copy = large;  // and back through the allocator
  copy.resize(10);
  copy.shrink_to_fit();
  EXPECT_EQ(copy[9], 1.5f);
  EXPECT_EQ(vm_flags_of(copy.data()).find(" hg"), std::string::npos) << vm_flags_of(copy.data());
}

}  // namespace
}  // namespace tern
