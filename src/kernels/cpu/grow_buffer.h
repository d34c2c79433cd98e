// Per-thread kernel scratch: an array that only ever grows, so a warm token loop allocates nothing. It is
// streamed storage (core/huge_pages.h): 64-byte aligned, and on huge pages once it spans one.
#pragma once

#include <cstddef>

#include "core/huge_pages.h"

namespace tern::kernels::cpu {

template <class T>
class GrowBuffer {
 public:
  T* at_least(size_t count) {
    if (count > storage_.size()) storage_ = StreamedArray<T>(count);
    return storage_.data();
  }

 private:
  StreamedArray<T> storage_;
};

}  // namespace tern::kernels::cpu
