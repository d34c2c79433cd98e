// Token embedding gather (model-spec §5.1): one stored row per token, decoded to fp32. The inverse
// Hadamard transform of a folded table is a separate site (site_inverse).
#pragma once

#include <cstdint>

#include "kernels/matrix_view.h"

namespace tern::kernels::ref {

// out: [n_tokens][table.cols]; row t = decode(table row tokens[t]). Ids must be < table.rows.
void embedding(float* out, const MatrixView& table, const int32_t* tokens, int64_t n_tokens);

}  // namespace tern::kernels::ref
