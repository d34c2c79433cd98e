// kernels/cpu throughput: PQ2_0 matvec (decode) and GEMM (prefill) on the 27B shapes with 1 and 2
// threads, activation quantisation, and the machine probes (read bandwidth, int8 dot peak).
// Weights rotate through a 1 GiB arena (larger than any cache here, L3 included) so every matvec reads
// from DRAM, as decode does. Rates are per CPU-second of the main thread (Google Benchmark's default):
// on a shared, oversubscribed machine wall time measures the neighbours; with 2 threads the main thread
// does half the rows, so its rate approximates the pair's throughput.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "core/huge_pages.h"
#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/bandwidth.h"
#include "kernels/cpu/dense_matmul.h"
#include "kernels/cpu/dot_peak.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "kernels/cpu/silu.h"
#include "kernels/cpu/trit_panels.h"
#include "kernels/cpu/trit_planes.h"
#include "kernels/cpu/trit_rows.h"
#include "kernels/ref/argmax.h"
#include "quant/codec.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"
#include "tools/bench.h"

namespace tern::kernels::cpu {
namespace {

constexpr size_t kArenaBytes = size_t{1} << 30;
constexpr uint16_t kScaleBits = 0x2400;  // fp16 2^-6: a normal value, so no float assists

// Random codes with every block scale set to kScaleBits; blocks sit at multiples of 34 bytes.
const uint8_t* weight_arena() {
  static const HugePageBuffer arena = [] {
    // Huge pages, as the model's placed weights use (model::WeightPlacement::kHugePages).
    HugePageBuffer bytes = HugePageBuffer::allocate(kArenaBytes, "weight arena");
    std::mt19937_64 rng(7);
    for (size_t i = 0; i + 8 <= kArenaBytes; i += 8) {
      const uint64_t v = rng();
      std::memcpy(bytes.data() + i, &v, 8);
    }
    for (size_t at = 0; at + kPq2BlockBytes <= kArenaBytes; at += kPq2BlockBytes) {
      std::memcpy(bytes.data() + at, &kScaleBits, 2);
    }
    return bytes;
  }();
  return arena.data();
}

ThreadPool& pool_of(int threads) {
  static ThreadPool one(1), two(2);
  return threads == 1 ? one : two;
}

std::vector<float> gaussian(int64_t n) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  return x;
}

using NamedKernel = std::pair<const char*, Pq2RowsKernel>;

// Every kernel this CPU runs, named.
std::vector<NamedKernel> runnable_kernels() {
  std::vector<NamedKernel> out{{"scalar", pq2_rows_scalar}};
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.has_avx2_fma()) {
    out.emplace_back("avx2", pq2_rows_avx2);
    out.emplace_back("avx2 words", pq2_rows_avx2_words);
  }
  if (cpu.has_avx_vnni()) {
    out.emplace_back("avxvnni", pq2_rows_avxvnni);
    out.emplace_back("avxvnni panels", pq2_rows_avxvnni_panels);
  }
  if (cpu.has_avx512_vnni()) {
    out.emplace_back("avx512 lanes", pq2_rows_avx512_lanes);
    out.emplace_back("avx512 groups", pq2_rows_avx512_groups);
    out.emplace_back("avx512 panels", pq2_rows_avx512_panels);
  }
  if (cpu.has_amx_int8()) {
    out.emplace_back("amx", pq2_rows_amx);
    out.emplace_back("amx few", pq2_rows_amx_few);
  }
#elif defined(__aarch64__)
  if (cpu.neon) out.emplace_back("neon", pq2_rows_neon);
  if (cpu.dotprod) out.emplace_back("dotprod", pq2_rows_dotprod);
#endif
  (void)cpu;
  return out;
}

const char* kernel_name(Pq2RowsKernel kernel) {
  for (const auto& [name, k] : runnable_kernels()) {
    if (k == kernel) return name;
  }
  return "?";
}

// The weight arena's matrices of one shape re-packed to PQ2_0 panels (quant/pq2_panels.h), as many copies
// as fit in the arena; re-packed when the shape changes.
const uint8_t* panel_arena(int64_t k, int64_t n, size_t copies) {
  static HugePageBuffer arena = HugePageBuffer::allocate(kArenaBytes, "panel arena");
  static int64_t packed_k = 0, packed_n = 0;
  if (k != packed_k || n != packed_n) {
    const size_t row_bytes = static_cast<size_t>(k / 128) * kPq2BlockBytes;
    const size_t rows_bytes = row_bytes * static_cast<size_t>(n),
                 panels_bytes = quant::pq2_panels_bytes(n, k);
    for (size_t c = 0; c < copies && (c + 1) * std::max(rows_bytes, panels_bytes) <= kArenaBytes; ++c)
      quant::pack_pq2_panels(weight_arena() + c * rows_bytes, row_bytes, n, k,
                             arena.data() + c * panels_bytes);
    packed_k = k;
    packed_n = n;
  }
  return arena.data();
}

// ActBuffer::quantize's block_steps_from for activations all of one StepScope.
int64_t first_block_step_token(StepScope steps) {
  return steps == StepScope::kBlock ? 0 : kNoBlockSteps;
}

// The steps this CPU quantises decode tokens with (pq2_decode_in_block_order()).
StepScope decode_steps() {
  return pq2_decode_in_block_order() ? StepScope::kBlock : StepScope::kGroup;
}

// Runs `kernel` through pq2_matmul on matrices of `form` (PQ2_0 rows or panels), the activations
// quantised with `steps` (act_quant.h). args: K, N, threads, tokens, rotate (0: one copy that stays in
// cache, the instruction-bound rate).
void run_pq2_matmul(benchmark::State& state, Pq2RowsKernel kernel,
                    quant::TensorType form = quant::TensorType::kPQ2_0, StepScope steps = StepScope::kGroup) {
  const int64_t k = state.range(0), n = state.range(1), tokens = state.range(3);
  const bool rotate = state.range(4) != 0;
  ThreadPool& pool = pool_of(static_cast<int>(state.range(2)));
  const bool panels = form == quant::TensorType::kPq2Panels;
  const size_t row_bytes = static_cast<size_t>(k / 128) * kPq2BlockBytes;
  const size_t rows_bytes = row_bytes * static_cast<size_t>(n);
  const size_t matrix_bytes = panels ? quant::pq2_panels_bytes(n, k) : rows_bytes;
  const size_t copies = rotate ? kArenaBytes / std::max(matrix_bytes, rows_bytes) : 1;
  const uint8_t* arena = panels ? panel_arena(k, n, copies) : weight_arena();
  const std::vector<float> x = gaussian(k * tokens);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), k, tokens, nullptr, first_block_step_token(steps));
  std::vector<float> y(static_cast<size_t>(n * tokens));
  size_t copy = 0;
  for (auto _ : state) {
    const TernaryMatrix w{arena + copy * matrix_bytes, n, k, row_bytes, form};
    pq2_matmul(y.data(), w, acts, &pool, kernel);
    benchmark::DoNotOptimize(y.data());
    copy = (copy + 1) % copies;
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["GB"] = benchmark::Counter(iterations * static_cast<double>(matrix_bytes) / 1e9,
                                            benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.counters["GMAC/s"] = benchmark::Counter(iterations * static_cast<double>(n * k * tokens) / 1e9,
                                                benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

void BM_Pq2Matmul(benchmark::State& state) {  // a decode step
  const Pq2RowsKernel kernel = pq2_decode_kernel();
  run_pq2_matmul(state, kernel, quant::TensorType::kPQ2_0, decode_steps());
  state.SetLabel(kernel_name(kernel));
}

// Pq2Matvec on the panel form with its decode kernel: the same shapes, split and rotation.
void BM_Pq2MatvecPanels(benchmark::State& state) {
  run_pq2_matmul(state, pq2_panel_form_decode_kernel(), quant::TensorType::kPq2Panels, decode_steps());
}

// Pq2Matvec's shapes and split with a kernel that only reads its rows: Pq2Matvec's rate over this one is
// the share of memory speed the kernel's arithmetic leaves.
void BM_ReadRowsOnly(benchmark::State& state) {
  run_pq2_matmul(state, pq2_rows_read_only);
  state.SetLabel("read only");
}

// The 27B matmul shapes (K, N): attention q+gate / k / v, o_proj, GDN qkv / z / out, FFN gate|up / down.
void DecodeShapes(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][2] = {{5120, 1024},  {5120, 6144}, {5120, 10240}, {5120, 12288},
                               {5120, 17408}, {6144, 5120}, {17408, 5120}};
  for (int threads : {1, 2})
    for (const auto& s : shapes) b->Args({s[0], s[1], threads, 1, 1});
}
BENCHMARK(BM_Pq2Matmul)->Name("Pq2Matvec")->Apply(DecodeShapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Pq2MatvecPanels)->Name("Pq2MatvecPanels")->Apply(DecodeShapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReadRowsOnly)->Name("Pq2MatvecReadOnly")->Apply(DecodeShapes)->Unit(benchmark::kMicrosecond);
// 128 rows x 5120 = 680 KiB: stays in L2, so this is the kernel's instruction-bound rate.
BENCHMARK(BM_Pq2Matmul)->Name("Pq2MatvecHot")->Args({5120, 128, 1, 1, 0})->Unit(benchmark::kMicrosecond);

// The 27B head (K 5120, 248,320 rows, 337 MB of PQ2_0) for one decode token on two threads, with its
// greedy pick: arg 0, the matmul and then ref::argmax over the logits on the calling thread (the path
// before the pick was fused); arg 1, pq2_matmul_argmax (each thread folds the rows it wrote).
void BM_HeadPick(benchmark::State& state) {
  constexpr int64_t k = 5120, n = 248320;
  const bool fused = state.range(0) != 0;
  ThreadPool& pool = pool_of(2);
  const size_t row_bytes = static_cast<size_t>(k / 128) * kPq2BlockBytes;
  const TernaryMatrix w{weight_arena(), n, k, row_bytes, quant::TensorType::kPQ2_0};
  const std::vector<float> x = gaussian(k);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), k, 1);
  std::vector<float> y(static_cast<size_t>(n));
  int32_t best = 0;
  for (auto _ : state) {
    if (fused) {
      pq2_matmul_argmax(y.data(), &best, w, acts, &pool, pq2_decode_kernel());
    } else {
      pq2_matmul(y.data(), w, acts, &pool, pq2_decode_kernel());
      best = static_cast<int32_t>(ref::argmax(y.data(), n));
    }
    benchmark::DoNotOptimize(best);
  }
  state.SetLabel(fused ? "fused pick" : "matmul, then the scan");
}
BENCHMARK(BM_HeadPick)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The scan the fused pick takes off the token's path: ref::argmax over the 27B head's 248,320 logits.
void BM_ArgmaxScan(benchmark::State& state) {
  const std::vector<float> logits = gaussian(248320);
  for (auto _ : state)
    benchmark::DoNotOptimize(ref::argmax(logits.data(), static_cast<int64_t>(logits.size())));
}
BENCHMARK(BM_ArgmaxScan)->Unit(benchmark::kMicrosecond);

// The in-L2 shape of the Hot benchmarks: 128 rows x 5120 = 680 KiB of PQ2_0.
constexpr int64_t kHotK = 5120, kHotN = 128;

// Runs `kernel` on w (kHotN x kHotK, any form) for `tokens` tokens on the calling thread, the activations
// quantised with `steps`: the instruction-bound rate.
void run_hot_kernel(benchmark::State& state, const TernaryMatrix& w, Pq2RowsKernel kernel, int64_t tokens,
                    StepScope steps = StepScope::kGroup) {
  const std::vector<float> x = gaussian(kHotK * tokens);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), kHotK, tokens, nullptr, first_block_step_token(steps));
  std::vector<float> y(static_cast<size_t>(kHotN * tokens));
  for (auto _ : state) {
    pq2_matmul(y.data(), w, acts, nullptr, kernel);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GMAC/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kHotK * kHotN * tokens) / 1e9,
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// Args: tokens, then the index into `kernels` of the one to run on w (in L2), its name the run's label.
void run_hot_named(benchmark::State& state, const TernaryMatrix& w, std::span<const NamedKernel> kernels,
                   StepScope steps = StepScope::kGroup) {
  const auto& [label, kernel] = kernels[static_cast<size_t>(state.range(1))];
  run_hot_kernel(state, w, kernel, state.range(0), steps);
  state.SetLabel(label);
}

// Every kernel this CPU runs on the in-L2 shape (args: index into runnable_kernels(), tokens, 1 for
// block steps as prompt tokens take, 0 for group steps), single thread.
void BM_Pq2KernelHot(benchmark::State& state) {
  const auto kernels = runnable_kernels();
  const auto index = static_cast<size_t>(state.range(0));
  if (index >= kernels.size()) {
    state.SkipWithError("kernel not runnable here");
    return;
  }
  const TernaryMatrix w{weight_arena(), kHotN, kHotK, kHotK / 128 * kPq2BlockBytes};
  run_hot_kernel(state, w, kernels[index].second, state.range(1),
                 state.range(2) != 0 ? StepScope::kBlock : StepScope::kGroup);
  state.SetLabel(kernels[index].first);
}
BENCHMARK(BM_Pq2KernelHot)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 4, 8, 12, 16, 64}, {0}})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Pq2KernelHot)  // block steps: prompt tokens, and decode tokens of VBMI CPUs
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 4, 8, 12, 16, 24, 32, 64}, {1}})
    ->Unit(benchmark::kMicrosecond);

#if defined(__x86_64__)
// The in-L2 shape's weights packed as PQ2_0 panels.
struct HotPanels {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(quant::pq2_panels_bytes(kHotN, kHotK));
  TernaryMatrix view{bytes.data(), kHotN, kHotK, kHotK / 128 * kPq2BlockBytes, quant::TensorType::kPq2Panels};
  HotPanels() { quant::pack_pq2_panels(weight_arena(), view.row_bytes, kHotN, kHotK, bytes.data()); }
};

// The kernels of PQ2_0 panels on BM_Pq2KernelHot's rows, re-packed (in L2), block steps as a VBMI CPU
// quantises every token; args: tokens, then the kernel: 0 and 2 the block-order (decode) one with the
// fields by shifts and by affine (FieldOps), 1 the group-order VNNI one (the same bits).
void BM_Pq2PanelFormKernelHot(benchmark::State& state) {
  if (!cpu_features().has_avx512_vbmi()) {
    state.SkipWithError("no AVX-512 VBMI here");
    return;
  }
  const HotPanels panels;
  const TernaryMatrix& w = panels.view;
  const NamedKernel kernels[] = {{"panel form blocks, shifts", pq2_panel_form_rows_blocks_shifts},
                                 {"panel form groups", pq2_panel_form_rows_groups},
                                 {"panel form blocks, affine", pq2_panel_form_rows_blocks_affine}};
  run_hot_named(state, w, kernels, StepScope::kBlock);
}
BENCHMARK(BM_Pq2PanelFormKernelHot)->ArgsProduct({{1, 2, 16, 64}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);

// The panel form's two AMX prompt kernels, block steps (in L2; args: tokens, then 0 for the chunk kernel,
// 1 for the few-token one): where pq2_panel_form_prompt_kernel switches (kPanelFormAmxMinTokens).
void BM_Pq2PanelFormPromptHot(benchmark::State& state) {
  if (!cpu_features().has_amx_int8()) {
    state.SkipWithError("no AMX-INT8 here");
    return;
  }
  const HotPanels panels;
  const TernaryMatrix& w = panels.view;
  const bool amx = state.range(1) == 0;
  run_hot_kernel(state, w, amx ? pq2_panel_form_rows_amx : pq2_panel_form_rows_amx_few, state.range(0),
                 StepScope::kBlock);
  state.SetLabel(amx ? "panel form amx" : "panel form amx few");
}
BENCHMARK(BM_Pq2PanelFormPromptHot)
    ->ArgsProduct({{2, 4, 8, 12, 16, 24, 32}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);
#endif

#if defined(__x86_64__)
// The trit planes decode kernel (the re-pack to PQ2_0 and the PQ2_0 decode kernel) on the same shape as
// BM_Pq2KernelHot (in L2), block steps as this CPU's decode takes them; args: tokens.
void BM_TritPlanesKernelHot(benchmark::State& state) {
  if (!cpu_features().has_avx512_vbmi()) {
    state.SkipWithError("no AVX-512 VBMI here");
    return;
  }
  const size_t row_bytes = *quant::row_bytes(quant::TensorType::kTritPlanes, kHotK);
  std::vector<uint8_t> bytes(row_bytes * kHotN);
  const std::vector<float> values = gaussian(kHotK * kHotN);
  for (int64_t r = 0; r < kHotN; ++r)
    quant::quantize_row(quant::TensorType::kTritPlanes, &values[r * kHotK], &bytes[r * row_bytes], kHotK);
  const TernaryMatrix w{bytes.data(), kHotN, kHotK, row_bytes, quant::TensorType::kTritPlanes};
  run_hot_kernel(state, w, trit_planes_decode_kernel(), state.range(0), StepScope::kBlock);
}
BENCHMARK(BM_TritPlanesKernelHot)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);

// The trit panels kernels on the same shape (in L2), block steps; args: tokens, then 0 for the decode
// kernel, 1 for the prompt path (the expansion to PQ2_0 panels and their prompt kernel).
void BM_TritPanelsKernelHot(benchmark::State& state) {
  if (!cpu_features().has_avx512_vbmi()) {
    state.SkipWithError("no AVX-512 VBMI here");
    return;
  }
  const size_t pq2_row = kHotK / 128 * kPq2BlockBytes;
  std::vector<uint8_t> rows(pq2_row * kHotN), panels(quant::trit_panels_bytes(kHotN, kHotK));
  const std::vector<float> values = gaussian(kHotK * kHotN);
  for (int64_t r = 0; r < kHotN; ++r)
    quant::quantize_row(quant::TensorType::kPQ2_0, &values[r * kHotK], &rows[r * pq2_row], kHotK);
  quant::pack_trit_panels(rows.data(), pq2_row, kHotN, kHotK, panels.data());
  const TernaryMatrix w{panels.data(), kHotN, kHotK, quant::trit_panels_row_bytes(kHotK),
                        quant::TensorType::kTritPanels};
  const NamedKernel kernels[] = {{"trit panels decode", trit_panels_rows_blocks},
                                 {"trit panels prompt", trit_panels_rows_prompt_vbmi}};
  run_hot_named(state, w, kernels, StepScope::kBlock);
}
BENCHMARK(BM_TritPanelsKernelHot)->ArgsProduct({{1, 2, 16, 64}, {0, 1}})->Unit(benchmark::kMicrosecond);
#endif

#if defined(__x86_64__)
// The trit rows kernels on the same shape (in L2); args: tokens, then 0 for the AVX2 kernel or 1 for the
// prompt path (the re-pack to PQ2_0 slab by slab and this CPU's PQ2_0 prompt kernel).
void BM_TritRowsKernelHot(benchmark::State& state) {
  if (!cpu_features().has_avx2_fma()) {
    state.SkipWithError("no AVX2 + FMA here");
    return;
  }
  const size_t row_bytes = *quant::row_bytes(quant::TensorType::kTritRows, kHotK);
  std::vector<uint8_t> bytes(row_bytes * kHotN);
  const std::vector<float> values = gaussian(kHotK * kHotN);
  for (int64_t r = 0; r < kHotN; ++r)
    quant::quantize_row(quant::TensorType::kTritRows, &values[r * kHotK], &bytes[r * row_bytes], kHotK);
  const TernaryMatrix w{bytes.data(), kHotN, kHotK, row_bytes, quant::TensorType::kTritRows};
  const bool direct = state.range(1) == 0;
  run_hot_kernel(state, w, direct ? trit_rows_avx2 : trit_rows_prompt, state.range(0));
  state.SetLabel(direct ? "trit rows avx2" : "trit rows re-packed");
}
BENCHMARK(BM_TritRowsKernelHot)->ArgsProduct({{1, 2, 4, 64}, {0, 1}})->Unit(benchmark::kMicrosecond);
#endif

// Prompt chunks of the 27B's widths; the last arg, the activations' steps: 1 block steps (the engine's
// prompt tokens), 0 group steps (its decode tokens' quantisation, the prompt's before block steps; with
// AMX the kernel hands those to the AVX-512 group kernels).
void PrefillShapes(benchmark::internal::Benchmark* b) {
  for (int64_t tokens : {64, 512})
    for (int threads : {1, 2})
      for (int64_t block_steps : {1, 0}) {
        b->Args({5120, 2048, threads, tokens, 1, block_steps});
        b->Args({17408, 1024, threads, tokens, 1, block_steps});
      }
}
StepScope prompt_steps(const benchmark::State& state) {
  return state.range(5) != 0 ? StepScope::kBlock : StepScope::kGroup;
}

void BM_Pq2Gemm(benchmark::State& state) {
  const Pq2RowsKernel kernel = pq2_prompt_kernel(state.range(3));
  run_pq2_matmul(state, kernel, quant::TensorType::kPQ2_0, prompt_steps(state));
  state.SetLabel(kernel_name(kernel));
}
BENCHMARK(BM_Pq2Gemm)->Name("Pq2Gemm")->Apply(PrefillShapes)->Unit(benchmark::kMillisecond);

// Pq2Gemm on the panel form with the prompt kernel the engine dispatches for it (the panel tile with
// AVX-512 VNNI; elsewhere the slab re-pack to the row kernels).
void BM_Pq2GemmPanels(benchmark::State& state) {
  run_pq2_matmul(state, pq2_panel_form_prompt_kernel(state.range(3)), quant::TensorType::kPq2Panels,
                 prompt_steps(state));
}
BENCHMARK(BM_Pq2GemmPanels)->Name("Pq2GemmPanels")->Apply(PrefillShapes)->Unit(benchmark::kMillisecond);

// Activation quantisation of one token (the cost added to each matmul site), args: K.
void BM_QuantizeActivations(benchmark::State& state) {
  const int64_t k = state.range(0);
  const std::vector<float> x = gaussian(k);
  ActBuffer buffer;
  buffer.reserve(k, 1);
  for (auto _ : state) {
    const QuantizedActs acts = buffer.quantize(x.data(), k, 1);
    benchmark::DoNotOptimize(acts.q);
  }
  state.SetItemsProcessed(state.iterations() * k);
}
BENCHMARK(BM_QuantizeActivations)->Arg(5120)->Arg(6144)->Arg(17408);

// SwiGLU over one token's FFN width (17408 values), in place; arg: 0 scalar (the oracle's double exp),
// 1 AVX2, 2 AVX-512.
void BM_Swiglu(benchmark::State& state) {
  constexpr int64_t kWidth = 17408;
  std::vector<SiluKernel> kernels{silu_scalar};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) kernels.push_back(silu_avx2);
  if (cpu_features().has_avx512_vnni()) kernels.push_back(silu_avx512);
#endif
  const auto which = static_cast<size_t>(state.range(0));
  if (which >= kernels.size()) {
    state.SkipWithError("ISA not present");
    return;
  }
  const std::vector<float> gate = gaussian(kWidth), up = gaussian(kWidth);
  std::vector<float> out(gate.size());
  for (auto _ : state) {
    std::copy(gate.begin(), gate.end(), out.begin());
    kernels[which](out.data(), out.data(), up.data(), kWidth);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kWidth);
}
BENCHMARK(BM_Swiglu)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

// The GDN decay projections of one 27B layer (ssm_alpha and ssm_beta: 96 BF16 rows of 5120, 983 KB, in
// L2 and L3 after the first pass) over one token on one thread: the dense kernels' arithmetic; arg: 0
// scalar, 1 AVX2, 2 AVX-512.
void BM_DenseRowsHot(benchmark::State& state) {
  constexpr int64_t kRows = 96, kCols = 5120;
  std::vector<DenseRowsKernel> kernels{dense_rows_scalar};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) kernels.push_back(dense_rows_avx2);
  if (cpu_features().has_avx2_fma() && cpu_features().avx512f) kernels.push_back(dense_rows_avx512);
#endif
  const auto which = static_cast<size_t>(state.range(0));
  if (which >= kernels.size()) {
    state.SkipWithError("ISA not present");
    return;
  }
  std::vector<uint16_t> bits;
  for (const float v : gaussian(kRows * kCols)) bits.push_back(fp32_to_bf16(v));
  const std::vector<float> x = gaussian(kCols);
  std::vector<float> y(kRows);
  const MatrixView w{quant::TensorType::kBF16, reinterpret_cast<const uint8_t*>(bits.data()), kCols, kRows,
                     kCols * sizeof(uint16_t)};
  for (auto _ : state) {
    kernels[which](y.data(), w, 0, kRows, x.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * static_cast<int64_t>(sizeof(uint16_t)));
}
BENCHMARK(BM_DenseRowsHot)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

// How soon the pool's worker joins a job that follows a single-threaded gap of `gap` µs (the caller
// busy, as between a decode token's matmuls): the worker's start after the dispatch, in µs. A worker that
// slept through the gap shows the futex wake's latency here.
void BM_PoolWorkerStartAfterGap(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const auto gap = std::chrono::microseconds(state.range(0));
  ThreadPool pool(2);
  double lag_us = 0;
  for (auto _ : state) {
    for (const auto until = Clock::now() + gap; Clock::now() < until;) {
    }
    const Clock::time_point dispatched = Clock::now();
    std::atomic<int64_t> worker_start{0};
    pool.for_each(2, [&](int64_t, int thread) {
      if (thread != 0) worker_start = (Clock::now() - dispatched).count();
      // The caller holds its index until the worker has one, so every job measures the worker.
      while (thread == 0 && worker_start.load() == 0 &&
             Clock::now() - dispatched < std::chrono::milliseconds(5)) {
      }
    });
    lag_us += static_cast<double>(worker_start.load()) / 1e3;
  }
  state.counters["worker_start_us"] = lag_us / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PoolWorkerStartAfterGap)->Arg(10)->Arg(50)->Arg(200)->Unit(benchmark::kMicrosecond);

// Streaming read of the weight arena on one thread (the decode roofline per core).
void BM_StreamRead(benchmark::State& state) {
  const auto* words = reinterpret_cast<const uint64_t*>(weight_arena());
  const size_t n = kArenaBytes / sizeof(uint64_t);
  for (auto _ : state) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i < n; i += 4) {
      s0 += words[i];
      s1 += words[i + 1];
      s2 += words[i + 2];
      s3 += words[i + 3];
    }
    benchmark::DoNotOptimize(s0 + s1 + s2 + s3);
  }
  state.counters["GB"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(kArenaBytes) / 1e9,
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond);

// In-cache int8 dot throughput of one core (the prefill roofline): independent chains of the ISA's
// u8 x s8 multiply-accumulate (dot_peak.h), skipped where the CPU lacks it.
template <class Chains>  // int64_t(int64_t rounds)
void int8_dot_peak(benchmark::State& state, bool runs_here, Chains chains, int64_t macs_per_round) {
  if (!runs_here) {
    state.SkipWithError("instruction set not available");
    return;
  }
  constexpr int64_t kRounds = 1'000'000;
  for (auto _ : state) benchmark::DoNotOptimize(chains(kRounds));
  state.counters["GMAC"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(kRounds * macs_per_round) / 1e9,
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

#if defined(__x86_64__)
void BM_Int8DotPeak(benchmark::State& state) {  // AVX2 maddubs + add
  int8_dot_peak(state, cpu_features().has_avx2_fma(), int8_dot_chains_avx2, kDotChainMacs);
}
BENCHMARK(BM_Int8DotPeak)->Unit(benchmark::kMillisecond);

void BM_Int8DotPeakVnni(benchmark::State& state) {  // AVX-512 VNNI dpbusd
  int8_dot_peak(state, cpu_features().has_avx512_vnni(), int8_dot_chains_avx512, kDotChainMacsAvx512);
}
BENCHMARK(BM_Int8DotPeakVnni)->Unit(benchmark::kMillisecond);

void BM_Int8DotPeakAvxVnni(benchmark::State& state) {  // AVX-VNNI dpbusd on ymm
  int8_dot_peak(state, cpu_features().has_avx_vnni(), int8_dot_chains_avxvnni, kDotChainMacsAvxVnni);
}
BENCHMARK(BM_Int8DotPeakAvxVnni)->Unit(benchmark::kMillisecond);

// AMX TDPBSSD, arg: K bytes per instruction (64: the full tile; 32: one activation scale group, the
// prefill kernel's step).
void BM_Int8DotPeakAmx(benchmark::State& state) {
  const int k_bytes = static_cast<int>(state.range(0));
  int8_dot_peak(
      state, cpu_features().has_amx_int8(),
      [k_bytes](int64_t rounds) { return int8_dot_tiles_amx(rounds, k_bytes); },
      amx_tile_round_macs(k_bytes));
}
BENCHMARK(BM_Int8DotPeakAmx)->Arg(64)->Arg(32)->Unit(benchmark::kMillisecond);
#elif defined(__aarch64__)
void BM_Int8DotPeakNeon(benchmark::State& state) {  // NEON smlal (s8 x s8 into int16)
  int8_dot_peak(state, cpu_features().neon, int8_dot_chains_neon, kDotChainMacsNeon);
}
BENCHMARK(BM_Int8DotPeakNeon)->Unit(benchmark::kMillisecond);

void BM_Int8DotPeakSdot(benchmark::State& state) {  // ARMv8.2 SDOT
  int8_dot_peak(state, cpu_features().dotprod, int8_dot_chains_dotprod, kDotChainMacsDotprod);
}
BENCHMARK(BM_Int8DotPeakSdot)->Unit(benchmark::kMillisecond);
#endif

// The wall-clock probes `tern bench` uses (meaningful on an otherwise idle machine).
void BM_ProbeReadBandwidth(benchmark::State& state) {
  ThreadPool& pool = pool_of(static_cast<int>(state.range(0)));
  double gbs = 0.0;
  for (auto _ : state) gbs = measure_read_bandwidth(pool, tools::default_bandwidth_bytes()).best_gb_s;
  state.counters["GB/s"] = gbs;
}
BENCHMARK(BM_ProbeReadBandwidth)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_ProbeInt8Dot(benchmark::State& state) {
  ThreadPool& pool = pool_of(static_cast<int>(state.range(0)));
  double gmacs = 0.0;
  for (auto _ : state) gmacs = measure_int8_dot_gmacs(pool);
  state.counters["GMAC/s"] = gmacs;
}
BENCHMARK(BM_ProbeInt8Dot)->Arg(1)->Arg(2)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tern::kernels::cpu
