#include "kernels/cpu/pq2_matmul.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/stream_read.h"
#include "kernels/ref/argmax.h"
#include "quant/pq2_panels.h"

namespace tern::kernels::cpu {

namespace {

// Rows handed to one thread are a multiple of this, so the row-interleaved fast paths see whole groups
// and the kernels of PQ2_0 panels whole panels (quant::kPq2PanelRows).
constexpr int64_t kRowGrain = 16;
// Below this many (row group × block × token) units (~20 µs of work) waking the pool costs more than
// it saves.
constexpr int64_t kMinParallelWork = 512;
// Matmuls of at most this many tokens (decode steps) take guided parts (ThreadPool::for_ranges_guided);
// a prompt chunk re-reads its activations for every part, so it takes a few equal ones.
constexpr int64_t kGuidedMaxTokens = 4;
constexpr int64_t kMinGuidedGroups = 2;

// Σ (code − 1)·(256·hi + lo) over one block, per ymm lane (lane l = qs bytes 4l..4l+3).
int32_t block_lane_dot(const uint8_t* qs, const int8_t* q, int32_t lane_neg_sum, int lane) {
  int32_t dot = lane_neg_sum;
  for (int s = 0; s < 4; ++s) {
    for (int i = 4 * lane; i < 4 * lane + 4; ++i) {
      const int32_t digits = 256 * q[32 * s + i] + q[kActBlock + 32 * s + i];
      dot += ((qs[i] >> (2 * s)) & 3) * digits;
    }
  }
  return dot;
}

}  // namespace

void pq2_rows_scalar(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                     int64_t row_begin, int64_t row_end) {
  const int64_t blocks = a.blocks();
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const int8_t* q = a.token_q(t);
    const float* scales = a.token_ymm_scales(t);
    const int32_t* neg_sums = a.token_ymm_neg_sums(t);
    for (int64_t r = row_begin; r < row_end; ++r) {
      const uint8_t* row = w.data + static_cast<size_t>(r) * w.row_bytes;
      float lanes[kYmmLanes] = {};
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = row + b * static_cast<int64_t>(kPq2BlockBytes);
        uint16_t d_bits;
        std::memcpy(&d_bits, block, sizeof d_bits);
        const float d_w = fp16_to_fp32(d_bits);
        for (int lane = 0; lane < kYmmLanes; ++lane) {
          const int32_t dot =
              block_lane_dot(block + 2, q + b * kActBlockBytes, neg_sums[b * kYmmLanes + lane], lane);
          lanes[lane] = std::fma(static_cast<float>(dot), d_w * scales[b * kYmmLanes + lane], lanes[lane]);
        }
      }
      y[t * y_stride + r] =
          ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
    }
  }
}

void pq2_rows_read_only(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                        int64_t row_begin, int64_t row_end) {
  if (row_begin >= row_end) return;
  // The range's bytes in memory: PQ2_0 panels are read whole. The loops want 64-byte-aligned starts and
  // whole steps: the range widens to the line before and drops its last partial step, a few bytes of a
  // range of kilobytes.
  uintptr_t begin = 0, end = 0;
  if (quant::is_panel_form(w.type)) {
    const size_t panel = *quant::matrix_bytes(w.type, quant::kPq2PanelRows, w.cols);
    begin =
        reinterpret_cast<uintptr_t>(w.data + static_cast<size_t>(row_begin / quant::kPq2PanelRows) * panel);
    end = reinterpret_cast<uintptr_t>(
        w.data + static_cast<size_t>((row_end + quant::kPq2PanelRows - 1) / quant::kPq2PanelRows) * panel);
  } else {
    begin = reinterpret_cast<uintptr_t>(w.data + static_cast<size_t>(row_begin) * w.row_bytes);
    end = reinterpret_cast<uintptr_t>(w.data + static_cast<size_t>(row_end) * w.row_bytes);
  }
  const uintptr_t first = begin & ~uintptr_t{63};
  const uintptr_t bytes = (end - first) / kStreamStep * kStreamStep;
  stream_read(reinterpret_cast<const uint8_t*>(first), bytes, StreamPattern{4, false});
  for (int64_t t = 0; t < a.n_tokens; ++t)
    std::fill(y + t * y_stride + row_begin, y + t * y_stride + row_end, 0.0f);
}

int64_t prompt_chunk_act_bytes() {
  constexpr int64_t kMostBytes = 512 * 1024;
  static const int64_t bytes = l2_cache_bytes() > 0 ? std::min(kMostBytes, l2_cache_bytes() / 2) : kMostBytes;
  return bytes;
}

int64_t prompt_chunk_tokens(int64_t per_token_act_bytes, int64_t tile_tokens) {
  const int64_t tiles = prompt_chunk_act_bytes() / per_token_act_bytes / tile_tokens;
  return std::max<int64_t>(1, tiles) * tile_tokens;
}

Pq2RowsKernel pq2_decode_kernel() {
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.has_avx512_vbmi()) return pq2_rows_avx512_groups;
  if (cpu.has_avx512_vnni()) return pq2_rows_avx512_lanes;
  if (cpu.has_avx_vnni()) return pq2_rows_avxvnni;
  if (cpu.has_avx2_fma()) return cpu.split_256 ? pq2_rows_avx2_words : pq2_rows_avx2;
#elif defined(__aarch64__)
  if (cpu.dotprod) return pq2_rows_dotprod;
  if (cpu.neon) return pq2_rows_neon;
#endif
  (void)cpu;
  return pq2_rows_scalar;
}

bool pq2_decode_in_lane_order() {
#if defined(__x86_64__)
  const Pq2RowsKernel kernel = pq2_decode_kernel();
  return kernel != pq2_rows_avx512_lanes && kernel != pq2_rows_avx512_groups;
#else
  return true;
#endif
}

bool pq2_decode_in_block_order() {
#if defined(__x86_64__)
  return pq2_decode_kernel() == pq2_rows_avx512_groups;
#else
  return false;
#endif
}

bool pq2_decode_takes_prompt_kernel(int64_t decode_tokens, int64_t prompt_tokens) {
  static const bool tiles_give_decode_bits = pq2_decode_in_block_order() && cpu_features().has_amx_int8();
  return tiles_give_decode_bits && (decode_tokens >= kAmxDecodeMinTokens || prompt_tokens > 0);
}

Pq2RowsKernel pq2_prompt_kernel(int64_t n_tokens) {
#if defined(__x86_64__)
  if (cpu_features().has_amx_int8()) return n_tokens >= kAmxMinTokens ? pq2_rows_amx : pq2_rows_amx_few;
  if (cpu_features().has_avx512_vnni())
    return n_tokens >= kPanelMinTokens ? pq2_rows_avx512_panels : pq2_rows_avx512_groups;
  if (cpu_features().has_avx_vnni()) return pq2_rows_avxvnni_panels;
#endif
  (void)n_tokens;
  return pq2_decode_kernel();
}

void pq2_matmul(float* y, const TernaryMatrix& w, const QuantizedActs& a, ThreadPool* pool) {
  pq2_matmul(y, w, a, pool, pq2_prompt_kernel(a.n_tokens));
}

void pq2_matmul(float* y, const TernaryMatrix& w, const QuantizedActs& a, ThreadPool* pool,
                Pq2RowsKernel kernel) {
  const TernaryTarget target{y, w};
  pq2_matmul_shared({&target, 1}, a, pool, kernel);
}

namespace {

// The rows of all targets, taken as one sequence, split over the pool's threads; after the kernel has
// written rows [begin, end) of target i, on_rows(i, begin, end, thread) runs on the thread that wrote them.
template <class OnRows>
void run_rows(std::span<const TernaryTarget> targets, const QuantizedActs& a, ThreadPool* pool,
              Pq2RowsKernel kernel, const DenseTasks* dense, const OnRows& on_rows) {
  int64_t groups = 0;  // row groups of all targets together
  for (const TernaryTarget& t : targets) {
    const TernaryMatrix& w = t.w;
    const std::optional<size_t> row_bytes = quant::row_bytes(w.type, w.cols);
    if (w.cols != a.k || w.cols % kActBlock != 0 || w.rows < 0 || !row_bytes || w.row_bytes < *row_bytes ||
        !is_pq2_kernel_form(w.type)) {
      fail(ErrorKind::kInternal, "pq2_matmul: {} weight {}x{} (row {} bytes) does not match activations k={}",
           quant::traits(w.type).name, w.rows, w.cols, w.row_bytes, a.k);
    }
    groups += (w.rows + kRowGrain - 1) / kRowGrain;
  }
  // Runs the global row groups [first, last) of the concatenated targets.
  const auto run_groups = [&](int64_t first, int64_t last, int thread) {
    int64_t base = 0;
    for (size_t i = 0; i < targets.size(); ++i) {
      const TernaryTarget& t = targets[i];
      const int64_t own = (t.w.rows + kRowGrain - 1) / kRowGrain;
      const int64_t begin = std::max(first, base), end = std::min(last, base + own);
      if (begin < end) {
        const int64_t row_begin = (begin - base) * kRowGrain,
                      row_end = std::min(t.w.rows, (end - base) * kRowGrain);
        kernel(t.y, t.w.rows, t.w, a, row_begin, row_end);
        on_rows(i, row_begin, row_end, thread);
      }
      base += own;
    }
  };
  const int64_t dense_tasks = dense != nullptr ? dense->count() : 0;
  const int threads = pool == nullptr ? 1 : pool->size();
  if (threads == 1 || groups * a.blocks() * a.n_tokens < kMinParallelWork) {
    for (int64_t task = 0; task < dense_tasks; ++task) dense->run(task);
    run_groups(0, groups, 0);
    return;
  }
  if (a.n_tokens <= kGuidedMaxTokens) {
    // Each thread's first range waits for the dense tasks it helps to claim.
    std::atomic<int64_t> next_dense{0};
    pool->for_ranges_guided(groups, kMinGuidedGroups, [&](int64_t first, int64_t last, int thread) {
      for (int64_t task; (task = next_dense.fetch_add(1, std::memory_order_relaxed)) < dense_tasks;)
        dense->run(task);
      run_groups(first, last, thread);
    });
    return;
  }
  // A few equal parts per thread, claimed dynamically, so a thread the OS pauses does not hold up the rest.
  const int64_t parts = std::min<int64_t>(groups, 4 * threads);
  pool->for_each(dense_tasks + parts, [&](int64_t index, int thread) {
    if (index < dense_tasks) {
      dense->run(index);
      return;
    }
    const int64_t part = index - dense_tasks;
    run_groups(groups * part / parts, groups * (part + 1) / parts, thread);
  });
}

}  // namespace

void pq2_matmul_shared(std::span<const TernaryTarget> targets, const QuantizedActs& a, ThreadPool* pool,
                       Pq2RowsKernel kernel, const DenseTasks* dense) {
  run_rows(targets, a, pool, kernel, dense, [](size_t, int64_t, int64_t, int) {});
}

void pq2_matmul_argmax(float* y, int32_t* best, const TernaryMatrix& w, const QuantizedActs& a,
                       ThreadPool* pool, Pq2RowsKernel kernel) {
  const int threads = pool == nullptr ? 1 : pool->size();
  thread_local GrowBuffer<ref::ArgmaxFold> buffer;
  ref::ArgmaxFold* picks = buffer.at_least(static_cast<size_t>(threads * a.n_tokens));  // [thread][token]
  std::fill_n(picks, threads * a.n_tokens, ref::ArgmaxFold{});
  const TernaryTarget target{y, w};
  run_rows({&target, 1}, a, pool, kernel, nullptr, [&](size_t, int64_t begin, int64_t end, int thread) {
    for (int64_t t = 0; t < a.n_tokens; ++t)
      picks[thread * a.n_tokens + t].take_run(y + t * w.rows + begin, begin, end - begin);
  });
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    ref::ArgmaxFold pick;
    for (int thread = 0; thread < threads; ++thread) pick.take(picks[thread * a.n_tokens + t]);
    best[t] = static_cast<int32_t>(pick.result());
  }
}

}  // namespace tern::kernels::cpu
