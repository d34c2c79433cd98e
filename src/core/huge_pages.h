// Anonymous memory backed by transparent huge pages where the kernel grants them. A stream over 2 MiB
// pages walks the page table 512 times less often than over 4 KiB pages, and the hardware prefetchers
// stop at page boundaries: on the development machine a 2-thread streaming read runs 10–25% faster
// (docs/performance.md), which is the whole margin of a bandwidth-bound decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
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

// Storage for buffers that every token streams (the KV cache, the GDN state) or that a step sweeps row by
// row (activations, kernel scratch): a block of at least one huge page comes from its own MADV_HUGEPAGE
// mapping, a smaller one from operator new; either is kStreamedAlign-aligned. Throws std::bad_alloc, as
// containers expect of an allocator.
inline constexpr size_t kStreamedAlign = 64;
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

// An owned array of `count` T on allocate_streamed storage, its contents unspecified (for scratch that is
// written before it is read, where a vector's zero fill would be wasted work).
template <class T>
class StreamedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  StreamedArray() = default;
  explicit StreamedArray(size_t count)
      : data_(count == 0 ? nullptr : static_cast<T*>(allocate_streamed(count * sizeof(T)))), count_(count) {}
  StreamedArray(StreamedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  StreamedArray& operator=(StreamedArray&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~StreamedArray() { release(); }

  T* data() const { return data_; }
  size_t size() const { return count_; }

 private:
  void release() noexcept {
    if (data_ != nullptr) deallocate_streamed(data_, count_ * sizeof(T));
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace tern
