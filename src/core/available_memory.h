// How much more memory this process can take before the kernel's OOM killer, not an error, would end it.
#pragma once

#include <cstdint>
#include <optional>

namespace tern {

// MemAvailable from /proc/meminfo, lowered to what is left under this process's cgroup limit (v2
// memory.max, v1 memory.limit_in_bytes) where one is set; nullopt where /proc/meminfo cannot be read.
std::optional<uint64_t> available_memory_bytes();

}  // namespace tern
