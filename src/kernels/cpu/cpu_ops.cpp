#include "kernels/cpu/cpu_ops.h"

#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/ref/matmul.h"

namespace tern::kernels {

namespace {

thread_local ThreadPool* cpu_pool = nullptr;

void cpu_matmul(float* y, const MatrixView& w, const float* x, int64_t n_tokens) {
  // model::Model holds every ternary matrix as PQ2_0 (PTQ1_0 is transcoded at load); other types are
  // small (norm-side BF16 a/b) or dense test files and take the oracle's path.
  if (w.type != quant::TensorType::kPQ2_0 || w.cols % cpu::kActBlock != 0) {
    ref::matmul(y, w, x, n_tokens);
    return;
  }
  thread_local cpu::ActBuffer buffer;
  const cpu::QuantizedActs acts = buffer.quantize(x, w.cols, n_tokens);
  cpu::pq2_matmul(y, cpu::Pq2Matrix{w.data, w.rows, w.cols, w.row_bytes}, acts, cpu_pool);
}

}  // namespace

const Ops& cpu_ops(ThreadPool& pool) {
  cpu_pool = &pool;
  static const Ops ops = [] {
    Ops table = reference_ops();
    table.name = "cpu";
    table.matmul = cpu_matmul;
    return table;
  }();
  return ops;
}

}  // namespace tern::kernels
