// Anonymous memory backed by transparent huge pages where the kernel grants them. A stream over 2 MiB
// pages walks the page table 512 times less often than over 4 KiB pages, and the hardware prefetchers
// stop at page boundaries: on the development machine a 2-thread streaming read runs 10–25% faster
// (docs/performance.md), which is the whole margin of a bandwidth-bound decode.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tern {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

class HugePageBuffer {
 public:
  // A zero-filled, writable mapping of at least `bytes` (rounded up to whole huge pages), advised
  // MADV_HUGEPAGE. Throws Error(kIo) naming `what` and the OS reason when the mapping fails.
  static HugePageBuffer allocate(size_t bytes, const char* what);

  HugePageBuffer() = default;
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tern
