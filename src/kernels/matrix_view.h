// A borrowed view of one weight matrix as stored in the GGUF (model-spec §2.1): ne = [cols, rows],
// cols (K, the reduction width) contiguous, each row `row_bytes` long in the tensor's own encoding.
// Every backend reads weights through this view; nothing here owns memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/types.h"

namespace tern::kernels {

struct MatrixView {
  quant::TensorType type = quant::TensorType::kF32;
  const uint8_t* data = nullptr;  // into the mmap or the model's placed copy; unaligned reads only
  int64_t cols = 0;               // K = ne[0]
  int64_t rows = 0;               // N = ne[1]
  size_t row_bytes = 0;

  const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
};

// One output of a group of matmuls taken together: y = w · x.
struct MatmulTarget {
  float* y;  // [n_tokens][w.rows]
  MatrixView w;
  // [n_tokens][w.cols]: this target's own activations where they differ from the group's (the GDN's decay
  // projections read the layer input before its Hadamard site); null: the group's.
  const float* x = nullptr;
};

}  // namespace tern::kernels
