// How much more memory this process can take before the kernel's OOM killer, not an error, would end it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace tern {

inline constexpr double kGiB = 1 << 30;  // how memory errors and warnings give their figures

// MemAvailable from /proc/meminfo, lowered to what is left under this process's cgroup limit where one is
// set (v2 memory.max, v1 memory.limit_in_bytes): the limit less the usage, whose page cache (memory.stat's
// file, v1 total_cache) counts as free, since the kernel reclaims it before it kills. nullopt where
// /proc/meminfo cannot be read.
std::optional<uint64_t> available_memory_bytes();

// The same over files under `root` (root/proc/meminfo, root/sys/fs/cgroup/...), for tests.
std::optional<uint64_t> available_memory_bytes(const std::filesystem::path& root);

// Throws Error(kCapacity) "WHAT: X GiB[ OF_WHAT] needed, Y GiB of memory available" where `bytes`, which the
// caller is about to zero-fill, exceed available_memory_bytes(): past that the OOM killer, not an error,
// would end the process. Nothing where the memory available is unknown.
void require_memory(uint64_t bytes, std::string_view what, std::string_view of_what = {});

}  // namespace tern
