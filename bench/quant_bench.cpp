// Throughput of the scalar reference codecs (quant/codec.h): dequantize_row for PQ2_0 and PTQ1_0, and
// transcode_row PQ2_0 <-> PTQ1_0. Bytes/s counts the packed input; items/s counts weights.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "quant/codec.h"

namespace tern::quant {
namespace {

constexpr int64_t kRowValues = 5120;  // the model's hidden width (model-spec §1)

// One row of random ternary data in `type`, made through the PQ2_0 packer and a transcode.
std::vector<uint8_t> ternary_row(TensorType type) {
  std::mt19937 rng(42);
  std::vector<uint8_t> pq2(*row_bytes(TensorType::kPQ2_0, kRowValues));
  std::array<uint8_t, kTernaryBlock> codes{};
  for (size_t at = 0; at < pq2.size(); at += kPq2Bytes) {
    for (auto& c : codes) c = static_cast<uint8_t>(rng() % 3);
    pq2_pack(codes.data(), 0x2400, pq2.data() + at);
  }
  if (type == TensorType::kPQ2_0) return pq2;
  std::vector<uint8_t> out(*row_bytes(type, kRowValues));
  transcode_row(TensorType::kPQ2_0, type, pq2.data(), out.data(), kRowValues, "bench");
  return out;
}

void BM_Dequantize(benchmark::State& state, TensorType type) {
  const std::vector<uint8_t> row = ternary_row(type);
  std::vector<float> out(kRowValues);
  for (auto _ : state) {
    dequantize_row(type, row.data(), out.data(), kRowValues);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(row.size()));
  state.SetItemsProcessed(state.iterations() * kRowValues);
}

void BM_Transcode(benchmark::State& state, TensorType from, TensorType to) {
  const std::vector<uint8_t> row = ternary_row(from);
  std::vector<uint8_t> out(*row_bytes(to, kRowValues));
  for (auto _ : state) {
    transcode_row(from, to, row.data(), out.data(), kRowValues, "bench");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(row.size()));
  state.SetItemsProcessed(state.iterations() * kRowValues);
}

BENCHMARK_CAPTURE(BM_Dequantize, pq2_0, TensorType::kPQ2_0);
BENCHMARK_CAPTURE(BM_Dequantize, ptq1_0, TensorType::kPTQ1_0);
BENCHMARK_CAPTURE(BM_Transcode, pq2_0_to_ptq1_0, TensorType::kPQ2_0, TensorType::kPTQ1_0);
BENCHMARK_CAPTURE(BM_Transcode, ptq1_0_to_pq2_0, TensorType::kPTQ1_0, TensorType::kPQ2_0);

}  // namespace
}  // namespace tern::quant
