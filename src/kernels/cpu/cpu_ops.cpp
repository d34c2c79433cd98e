#include "kernels/cpu/cpu_ops.h"

#include <algorithm>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/attention_cpu.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/ref/matmul.h"
#include "quant/codec.h"

namespace tern::kernels {

namespace {

thread_local ThreadPool* cpu_pool = nullptr;

// The PQ2_0 form of a PTQ1_0 matrix, rows transcoded over the pool into this thread's buffer.
MatrixView transcode_to_pq2(const MatrixView& w, std::vector<uint8_t>& buffer) {
  const size_t row_bytes = static_cast<size_t>(w.cols / 128) * quant::kPq2Bytes;
  buffer.resize(row_bytes * static_cast<size_t>(w.rows));
  constexpr int64_t kRowsPerTask = 64;
  uint8_t* out = buffer.data();
  const auto transcode_rows = [&](int64_t task) {
    const int64_t end = std::min(w.rows, (task + 1) * kRowsPerTask);
    for (int64_t r = task * kRowsPerTask; r < end; ++r) {
      quant::transcode_row(quant::TensorType::kPTQ1_0, quant::TensorType::kPQ2_0, w.row(r),
                           out + static_cast<size_t>(r) * row_bytes, w.cols, "cpu matmul");
    }
  };
  const int64_t tasks = (w.rows + kRowsPerTask - 1) / kRowsPerTask;
  if (cpu_pool != nullptr) {
    cpu_pool->for_each(tasks, [&](int64_t task, int) { transcode_rows(task); });
  } else {
    for (int64_t task = 0; task < tasks; ++task) transcode_rows(task);
  }
  return MatrixView{quant::TensorType::kPQ2_0, out, w.cols, w.rows, row_bytes};
}

void cpu_matmul(float* y, const MatrixView& w, const float* x, int64_t n_tokens) {
  const bool ternary = w.type == quant::TensorType::kPQ2_0 || w.type == quant::TensorType::kPTQ1_0;
  if (!ternary || w.cols % cpu::kActBlock != 0) {
    ref::matmul(y, w, x, n_tokens);
    return;
  }
  thread_local std::vector<uint8_t> transcoded;
  const MatrixView pq2 = w.type == quant::TensorType::kPQ2_0 ? w : transcode_to_pq2(w, transcoded);
  thread_local cpu::ActBuffer buffer;
  const cpu::QuantizedActs acts = buffer.quantize(x, pq2.cols, n_tokens);
  cpu::pq2_matmul(y, cpu::Pq2Matrix{pq2.data, pq2.rows, pq2.cols, pq2.row_bytes}, acts, cpu_pool);
}

}  // namespace

const Ops& cpu_ops(ThreadPool& pool) {
  cpu_pool = &pool;
  static const Ops ops = [] {
    Ops table = reference_ops();
    table.name = "cpu";
    table.matmul = cpu_matmul;
    table.attention = [](float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head,
                         float scale) { cpu::attention(out, q, kv, n_keys, n_head, scale, cpu_pool); };
    return table;
  }();
  return ops;
}

}  // namespace tern::kernels
