// KV caches for the attention tests, built from rows drawn position by position.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ref/attention.h"

namespace tern::testing_support {

// Rows [position][n_kv][hd] of `flat` placed where a cache lays them out (kernels::ref::kv_row), the rows
// of the last block's missing positions value-initialised.
template <class T>
std::vector<T> in_kv_layout(const std::vector<T>& flat, int64_t positions, int64_t n_kv, int64_t hd) {
  std::vector<T> cache(static_cast<size_t>(kernels::ref::kv_rows(positions, n_kv) * hd), T{});
  for (int64_t t = 0; t < positions; ++t) {
    for (int64_t j = 0; j < n_kv; ++j) {
      std::copy_n(flat.begin() + (t * n_kv + j) * hd, hd,
                  cache.begin() + kernels::ref::kv_row(t, j, n_kv) * hd);
    }
  }
  return cache;
}

}  // namespace tern::testing_support
