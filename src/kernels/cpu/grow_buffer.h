// Per-thread kernel scratch: a 64-byte aligned array that only ever grows, so a warm token loop
// allocates nothing.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace tern::kernels::cpu {

template <class T>
class GrowBuffer {
 public:
  T* at_least(size_t count) {
    if (count > capacity_) {
      const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
      void* p = std::aligned_alloc(64, bytes);
      if (p == nullptr) throw std::bad_alloc();
      data_.reset(static_cast<T*>(p));
      capacity_ = count;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t capacity_ = 0;
};

}  // namespace tern::kernels::cpu
