#include "kernels/ref/embedding.h"

#include "quant/codec.h"

namespace tern::kernels::ref {

void embedding(float* out, const MatrixView& table, const int32_t* tokens, int64_t n_tokens) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    quant::dequantize_row(table.type, table.row(tokens[t]), out + t * table.cols, table.cols);
  }
}

}  // namespace tern::kernels::ref
