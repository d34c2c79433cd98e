#include "core/available_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

namespace tern {
namespace {

TEST(AvailableMemory, IsReadAndNoMoreThanTheMachineHas) {
  const std::optional<uint64_t> available = available_memory_bytes();
  ASSERT_TRUE(available.has_value());
  const auto physical =
      static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_GT(*available, 0u);
  EXPECT_LE(*available, physical);
}

}  // namespace
}  // namespace tern
