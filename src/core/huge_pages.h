// Anonymous memory backed by transparent huge pages where the kernel grants them. A stream over 2 MiB
// pages walks the page table 512 times less often than over 4 KiB pages, and the hardware prefetchers
// stop at page boundaries: on the development machine a 2-thread streaming read runs 10–25% faster
// (docs/performance.md), which is the whole margin of a bandwidth-bound decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

// Storage for std containers of buffers that every token streams (the KV cache, the GDN state): a block of
// at least one huge page comes from its own MADV_HUGEPAGE mapping, a smaller one from operator new. Throws
// std::bad_alloc, as containers expect of an allocator.
void* allocate_streamed(size_t bytes);
void deallocate_streamed(void* p, size_t bytes) noexcept;

template <class T>
struct StreamedAllocator {
  using value_type = T;
  StreamedAllocator() = default;
  template <class U>
  StreamedAllocator(const StreamedAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_streamed(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { deallocate_streamed(p, n * sizeof(T)); }
  friend bool operator==(const StreamedAllocator&, const StreamedAllocator&) { return true; }
};

template <class T>
using StreamedVector = std::vector<T, StreamedAllocator<T>>;

}  // namespace tern
