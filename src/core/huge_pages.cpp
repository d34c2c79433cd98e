#include "core/huge_pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "core/error.h"

namespace tern {

HugePageBuffer HugePageBuffer::allocate(size_t bytes, const char* what) {
  HugePageBuffer buffer;
  if (bytes == 0) return buffer;
  const size_t size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    fail(ErrorKind::kIo, "{}: cannot map {} bytes of memory: {}", what, size, std::strerror(err));
  }
  // Advice only: without transparent huge pages (or with them off) the buffer works on 4 KiB pages.
  ::madvise(p, size, MADV_HUGEPAGE);
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

namespace {

size_t whole_huge_pages(size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

}  // namespace

void* allocate_streamed(size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new(bytes);
  void* p =
      ::mmap(nullptr, whole_huge_pages(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  ::madvise(p, whole_huge_pages(bytes), MADV_HUGEPAGE);
  return p;
}

void deallocate_streamed(void* p, size_t bytes) noexcept {
  if (bytes < kHugePageBytes) {
    ::operator delete(p);
  } else {
    ::munmap(p, whole_huge_pages(bytes));
  }
}

}  // namespace tern
