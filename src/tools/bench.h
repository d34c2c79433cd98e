// `tern bench`: prompt-processing (pp) and token-generation (tg) throughput in the manner of llama-bench,
// with the machine's streaming-read bandwidth beside it, so the decode speed reads as a fraction of the
// memory roofline (design.md: decode is bandwidth-bound).
//
// Usage:
//   tools::BenchOptions options{.model_path = "m.gguf", .prompt_tokens = {512}, .gen_tokens = {128},
//                               .threads = {1, 2}};
//   const tools::BenchReport report = tools::run_bench(options);
//   std::puts(tools::bench_markdown(report).c_str());
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/bandwidth.h"
#include "model/model.h"
#include "runtime/engine.h"
#include "runtime/sequence_state.h"

namespace tern::tools {

inline constexpr size_t kMinBandwidthBytes = size_t{64} << 20;  // the least buffer the probe streams
inline constexpr int64_t kMaxParallel = 256;  // sequences a tg test decodes at once, at most
// The most tokens a -p, -n or -d entry may ask for: their sums then stay far inside int64 (memory, not
// this bound, limits a real test; run_bench checks it before the first token).
inline constexpr int64_t kMaxTestTokens = int64_t{1} << 40;

// The buffer the bandwidth probe streams unless told otherwise: 1 GiB, or 16 times the last-level cache
// where that is larger, and at most a quarter of the machine's memory (never under kMinBandwidthBytes).
// A buffer only a few times the cache is partly served from it: on a host with a 300 MiB L3 (Emerald
// Rapids, 12-06) a 1 GiB probe read 37.8-38.4 GB/s and a 4.7 GiB one 33.8-36.1 in the same minutes,
// while decode streams 7 GB a token from memory.
size_t default_bandwidth_bytes();

// A prompt then its generation, timed together (llama-bench's -pg): "pp512+tg128".
struct PromptThenGen {
  int64_t prompt_tokens = 0;
  int64_t gen_tokens = 0;
};

struct BenchOptions {
  std::string model_path;
  std::vector<int64_t> prompt_tokens{512};       // one pp test per entry (0 entries skipped)
  std::vector<int64_t> gen_tokens{128};          // one tg test per entry (0 entries skipped)
  std::vector<PromptThenGen> prompt_then_gen{};  // one pp+tg test per entry, each count ≥ 1
  std::vector<int64_t> depths{0};                // tokens already in the context before each test
  // Sequences each tg test decodes in lockstep, one token of each a step (a server's batched decode):
  // one tg test per entry, each ≥ 1 and ≤ kMaxParallel.
  std::vector<int64_t> parallel{1};
  int repetitions = 5;
  // Every test runs once per entry, on an engine with that many threads and against a bandwidth probe on
  // as many (0: every allowed CPU).
  std::vector<int> threads{0};
  bool pin_threads = false;
  runtime::Backend backend = runtime::Backend::kCpu;
  runtime::KvPrecision kv = runtime::KvPrecision::kF16;
  // The buffer the bandwidth probe streams: 0 for default_bandwidth_bytes(), else ≥ kMinBandwidthBytes.
  size_t bandwidth_bytes = 0;
  uint32_t seed = 1;  // of the synthetic prompt
  // Fill the depth with random keys, values and recurrent state instead of prefilling it: decode's
  // cost depends on how much context there is, not on its values, and a 32k prefill of the 27B takes
  // hours on a laptop-class CPU.
  bool synthetic_depth = false;
  // Ternary matmuls that only read their weights (runtime::EngineOptions::read_only_matmuls): the decode
  // a kernel whose arithmetic cost nothing would reach. The model's outputs are then meaningless.
  bool read_only_matmuls = false;
  // Every repetition runs the tg tests together, one token of each in turn (their sequence states held at
  // once), so that tests at different depths compare over the same moments of a shared host.
  bool interleave_decode = false;
  model::LoadOptions load{};
};

// An interval [low, high] that holds the median of the distribution a sample came from with
// probability at least `coverage`.
struct MedianInterval {
  double low = 0.0;
  double high = 0.0;
  double coverage = 0.0;
};

struct BenchTest {
  // "pp512", "tg128", "pp512+tg128", with " x4" for 4 sequences at once, " @ d4096" at a depth
  std::string name{};
  int64_t prompt_tokens = 0;
  int64_t gen_tokens = 0;  // per sequence; with prompt_tokens too, a pp+tg test timed as one
  int threads = 0;         // the engine's: ≥ 1 (1 on the ref backend)
  int64_t parallel = 1;    // tg only: sequences decoded in lockstep; tok_s counts all their tokens
  int64_t depth = 0;
  std::vector<double> tok_s{};  // one per repetition
  double mean_tok_s = 0.0;
  double sd_tok_s = 0.0;
  double bandwidth_gb_s = 0.0;             // the best probe pass on this test's threads
  uint64_t bytes_per_token = 0;            // tg only: decode bytes read per token at this depth and parallel
  double decode_bandwidth_fraction = 0.0;  // tg only
  // A test at a depth whose depth-0 twin (the same pp or tg count) also ran: the median over repetitions
  // of this test's t/s ÷ the twin's in the same round, − 1 (compare_to_depth0).
  std::optional<double> vs_depth0{};
  // With at least five rounds, a distribution-free interval for that median (median_interval).
  std::optional<MedianInterval> vs_depth0_interval{};
};

enum class TestKind { kPrompt, kGen, kPromptThenGen };
// pp tests only feed a prompt, tg tests only decode, pp+tg tests do both.
TestKind kind_of(const BenchTest& test);

// The streaming-read probe on one thread count, the better of its passes before and after that count's
// tests (kernels::cpu::ReadBandwidth's best and median).
struct ThreadsBandwidth {
  int threads = 0;
  double best_gb_s = 0.0;
  double median_gb_s = 0.0;
};

struct BenchReport {
  std::string model;  // general.name, or the file name
  std::string file;
  std::string backend;
  bool read_only_matmuls = false;  // BenchOptions::read_only_matmuls: the figures are a ceiling
  std::string isa;
  std::string weights;  // "huge pages" or "mapped" (model::WeightPlacement), the PTQ1_0 form if any, and
                        // the PQ2_0 one if not rows
  uint64_t model_bytes = 0;
  std::vector<ThreadsBandwidth> bandwidths;  // one per thread count, in the order run: what fractions are of
  size_t bandwidth_bytes = 0;                // the buffer the probe streamed
  std::vector<BenchTest> tests;
  // Headline figures: the first pp and tg tests (0 when there is none); pp+tg tests are neither.
  double prefill_tok_s = 0.0;
  double decode_tok_s = 0.0;
  uint64_t bytes_per_token = 0;
  double decode_bandwidth_fraction = 0.0;
  uint64_t peak_rss_bytes = 0;  // of the whole process over the tests (the probes' buffers left out)
  uint64_t max_kv_bytes = 0;    // the most sequence state (KV + recurrent + conv) held at once
};

// Bytes one decode token reads with `depth` tokens in the context: every tensor but token_embd (kept
// when there is no output.weight, as tied embeddings are then the head), the GDN recurrent state read
// and written (2 × 4 B × GDN layers × n_v × dk × dv) and the K and V cache of every attention layer.
// With `sequences` decoding in one step the tensors are read once for all of them: a token's share is
// the tensors ÷ sequences (rounded down) plus its own state and cache.
uint64_t decode_bytes_per_token(const model::Model& model, int64_t depth, runtime::KvPrecision kv,
                                int64_t sequences = 1);

// Sets vs_depth0 on every test at a depth > 0 with a depth-0 twin (the same counts on the same thread count)
// and as many repetitions. The repetitions
// take turns over the tests, so each ratio compares two runs seconds apart; their median is moved far less
// than the ratio of means by a shared host's phases, which last seconds to minutes. With five rounds or
// more it sets vs_depth0_interval too: whether a 10% line is resolved or only touched.
void compare_to_depth0(std::vector<BenchTest>& tests);

// The order statistics x_(k) and x_(n+1−k) of `values`, with the largest k whose coverage, 1 − 2·P(B < k)
// for B ~ Binomial(n, ½), is at least 90%: no assumption on the distribution, only independent rounds.
// None below five values, where even [min, max] covers less (four: 87.5%).
std::optional<MedianInterval> median_interval(std::vector<double> values);

// Streaming-read bandwidth on a pool of `threads` (0: every allowed CPU), streaming `bytes`
// (0: default_bandwidth_bytes()). Throws Error(kInput) under kMinBandwidthBytes and Error(kCapacity) past
// the memory available. `pin` pins the pool as a pinned test's: a pinned pool leaves the thread that ran it
// on one CPU, where an unpinned pool's workers, inheriting its mask, would all start.
kernels::cpu::ReadBandwidth measure_bandwidth(int threads, size_t bytes, bool pin);

// The probe on each of `threads` in turn (--memory-bandwidth), and the buffer it streamed.
struct BandwidthProbes {
  std::vector<ThreadsBandwidth> by_threads;
  size_t bytes = 0;
};
BandwidthProbes measure_bandwidths(const std::vector<int>& threads, size_t bytes);

// The probes' figures as the report gives them: the first thread count's bandwidth_gb_s,
// bandwidth_median_gb_s and threads, bandwidth_probe_bytes, and a "bandwidth" entry per count.
nlohmann::ordered_json bandwidth_json(const std::vector<ThreadsBandwidth>& probes, size_t probe_bytes);

// "29.06 GB/s best pass, 28.68 median (2 threads, 1.00 GiB probe)"
std::string describe_probe(const ThreadsBandwidth& probe, size_t probe_bytes);

// Throws Error(kInput) for no tests, repetitions < 1, counts, depths or thread counts out of range, a
// thread count given twice, on the ref backend (one thread) several, one past 1 or --pin, and options that
// would change nothing the tests run (--parallel or --interleave without a tg test, --synthetic-depth without
// a depth); Error(kCapacity) for a probe or a test's state past the memory available.
BenchReport run_bench(const BenchOptions& options);

nlohmann::ordered_json bench_json(const BenchReport& report);
std::string bench_markdown(const BenchReport& report);

}  // namespace tern::tools
