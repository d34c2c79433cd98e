#include "core/available_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace tern {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(AvailableMemory, IsReadAndNoMoreThanTheMachineHas) {
  const std::optional<uint64_t> available = available_memory_bytes();
  ASSERT_TRUE(available.has_value());
  const auto physical =
      static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_GT(*available, 0u);
  EXPECT_LE(*available, physical);
}

// A fake root with /proc/meminfo and, optionally, one cgroup's files.
class FakeRoot {
 public:
  explicit FakeRoot(const std::string& name)
      : root_(std::filesystem::path(testing::TempDir()) / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(root_);
    write("proc/meminfo", "MemTotal:       33554432 kB\nMemAvailable:   16777216 kB\nMemFree: 1 kB\n");
  }
  ~FakeRoot() { std::filesystem::remove_all(root_); }
  void write(const std::string& file, const std::string& text) const {
    std::filesystem::create_directories((root_ / file).parent_path());
    std::ofstream(root_ / file) << text;
  }
  const std::filesystem::path& path() const { return root_; }

 private:
  std::filesystem::path root_;
};

TEST(AvailableMemory, IsMemAvailableWithoutACgroupLimit) {
  const FakeRoot root("mem_plain");
  EXPECT_EQ(available_memory_bytes(root.path()), 16 * kGiB);
  root.write("sys/fs/cgroup/memory.max", "max\n");
  root.write("sys/fs/cgroup/memory.current", std::to_string(30 * kGiB));
  EXPECT_EQ(available_memory_bytes(root.path()), 16 * kGiB);
}

// Under a limit, what is left is the limit less the usage, the usage's page cache counting as free.
TEST(AvailableMemory, IsLoweredToWhatACgroupLimitLeaves) {
  const FakeRoot v2("mem_v2");
  v2.write("sys/fs/cgroup/memory.max", std::to_string(24 * kGiB));
  v2.write("sys/fs/cgroup/memory.current", std::to_string(20 * kGiB));
  v2.write("sys/fs/cgroup/memory.stat", "anon 1\nfile " + std::to_string(6 * kGiB) + "\nfile_mapped 3\n");
  EXPECT_EQ(available_memory_bytes(v2.path()), 10 * kGiB);

  const FakeRoot v1("mem_v1");
  v1.write("sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(8 * kGiB));
  v1.write("sys/fs/cgroup/memory/memory.usage_in_bytes", std::to_string(7 * kGiB));
  v1.write("sys/fs/cgroup/memory/memory.stat", "cache 5\ntotal_cache " + std::to_string(2 * kGiB) + "\n");
  EXPECT_EQ(available_memory_bytes(v1.path()), 3 * kGiB);

  v1.write("sys/fs/cgroup/memory/memory.usage_in_bytes", std::to_string(9 * kGiB));
  v1.write("sys/fs/cgroup/memory/memory.stat", "");
  EXPECT_EQ(available_memory_bytes(v1.path()), 0u);
}

TEST(AvailableMemory, IsUnknownWithoutMeminfo) {
  const FakeRoot root("mem_none");
  std::filesystem::remove(root.path() / "proc/meminfo");
  EXPECT_EQ(available_memory_bytes(root.path()), std::nullopt);
  root.write("proc/meminfo", "MemAvailable:   garbage kB\n");
  EXPECT_EQ(available_memory_bytes(root.path()), std::nullopt);
}

}  // namespace
}  // namespace tern
