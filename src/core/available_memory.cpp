#include "core/available_memory.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"

namespace tern {

namespace {

// The first number in a file ("max" and unreadable files give nullopt).
std::optional<uint64_t> read_number(const std::filesystem::path& path) {
  std::ifstream in(path);
  uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

// The value of `key` in a file of "key value [unit]" lines (/proc/meminfo, memory.stat).
std::optional<uint64_t> read_key(const std::filesystem::path& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() == key.size() || line[key.size()] != ' ')
      continue;
    std::istringstream fields(line.substr(key.size()));
    uint64_t value = 0;
    if (fields >> value) return value;
    return std::nullopt;
  }
  return std::nullopt;
}

// What is left under a cgroup's limit (nullopt when it sets none): limit − (usage − page cache).
std::optional<uint64_t> left_under(const std::filesystem::path& dir, const char* limit_file,
                                   const char* usage_file, const char* cache_key) {
  const std::optional<uint64_t> limit = read_number(dir / limit_file);
  const std::optional<uint64_t> usage = read_number(dir / usage_file);
  if (!limit || !usage) return std::nullopt;
  const uint64_t cache = read_key(dir / "memory.stat", cache_key).value_or(0);
  const uint64_t used = *usage - std::min(*usage, cache);
  return *limit > used ? *limit - used : 0;
}

}  // namespace

std::optional<uint64_t> available_memory_bytes(const std::filesystem::path& root) {
  const std::optional<uint64_t> kib = read_key(root / "proc/meminfo", "MemAvailable:");
  if (!kib) return std::nullopt;
  uint64_t available = *kib << 10;
  const std::filesystem::path cgroup = root / "sys/fs/cgroup";
  for (const std::optional<uint64_t> left :
       {left_under(cgroup, "memory.max", "memory.current", "file"),
        left_under(cgroup / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_cache")}) {
    if (left) available = std::min(available, *left);
  }
  return available;
}

std::optional<uint64_t> available_memory_bytes() {
  return available_memory_bytes("/");
}

void require_memory(uint64_t bytes, std::string_view what, std::string_view of_what) {
  const std::optional<uint64_t> available = available_memory_bytes();
  if (!available || bytes <= *available) return;
  fail(ErrorKind::kCapacity, "{}: {:.1f} GiB{} needed, {:.1f} GiB of memory available", what,
       static_cast<double>(bytes) / kGiB, of_what, static_cast<double>(*available) / kGiB);
}

}  // namespace tern
