#include "core/available_memory.h"

#include <algorithm>
#include <fstream>
#include <string>

namespace tern {

namespace {

// The first number in a file ("max" and unreadable files give nullopt).
std::optional<uint64_t> read_number(const char* path) {
  std::ifstream in(path);
  uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

std::optional<uint64_t> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib << 10;
  }
  return std::nullopt;
}

// What is left under a cgroup's limit: limit − usage, nullopt when there is no limit.
std::optional<uint64_t> left_under(const char* limit_path, const char* usage_path) {
  const std::optional<uint64_t> limit = read_number(limit_path);
  const std::optional<uint64_t> usage = read_number(usage_path);
  if (!limit || !usage) return std::nullopt;
  return *limit > *usage ? *limit - *usage : 0;
}

}  // namespace

std::optional<uint64_t> available_memory_bytes() {
  std::optional<uint64_t> available = meminfo_available();
  if (!available) return std::nullopt;
  for (const std::optional<uint64_t> left :
       {left_under("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        left_under("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                   "/sys/fs/cgroup/memory/memory.usage_in_bytes")}) {
    if (left) available = std::min(*available, *left);
  }
  return available;
}

}  // namespace tern
