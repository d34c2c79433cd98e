#include "core/huge_pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "core/error.h"

namespace tern {

namespace {

// A size within one huge page of the address space's end stays as it is, for mmap to refuse, rather than
// wrapping to 0.
size_t whole_huge_pages(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - (kHugePageBytes - 1)) return bytes;
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

// A zero-filled mapping of `size` bytes (whole huge pages) advised MADV_HUGEPAGE, or nullptr with errno
// set. The advice is only advice: without transparent huge pages the memory works on 4 KiB pages.
void* map_huge_pages(size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  ::madvise(p, size, MADV_HUGEPAGE);
  return p;
}

}  // namespace

HugePageBuffer HugePageBuffer::allocate(size_t bytes, const char* what) {
  HugePageBuffer buffer;
  if (bytes == 0) return buffer;
  const size_t size = whole_huge_pages(bytes);
  void* p = map_huge_pages(size);
  if (p == nullptr) {
    const int err = errno;
    fail(ErrorKind::kIo, "{}: cannot map {} bytes of memory: {}", what, size, std::strerror(err));
  }
  buffer.data_ = static_cast<uint8_t*>(p);
  buffer.size_ = size;
  return buffer;
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() {
  release();
}

void HugePageBuffer::release() {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

void* allocate_streamed(size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new (bytes, std::align_val_t{kStreamedAlign});
  void* p = map_huge_pages(whole_huge_pages(bytes));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void deallocate_streamed(void* p, size_t bytes) noexcept {
  if (bytes < kHugePageBytes) {
    ::operator delete (p, std::align_val_t{kStreamedAlign});
  } else {
    ::munmap(p, whole_huge_pages(bytes));
  }
}

}  // namespace tern
