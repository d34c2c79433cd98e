#include "tools/bench.h"

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <variant>

#include "core/available_memory.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/bandwidth.h"
#include "quant/types.h"

namespace tern::tools {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int32_t> synthetic_tokens(const model::Model& model, int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(model.config().vocab_size - 1));
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(n));
  while (static_cast<int64_t>(out.size()) < n) {
    const int32_t t = id(rng);
    if (model.accepts_token(t)) out.push_back(t);
  }
  return out;
}

// Feeds `tokens` in chunks the engine accepts; only the last chunk asks for logits.
void feed(runtime::Engine& engine, runtime::SequenceState& seq, std::span<const int32_t> tokens) {
  const auto chunk = static_cast<size_t>(engine.limits().max_tokens);
  for (size_t start = 0; start < tokens.size(); start += chunk) {
    const size_t count = std::min(chunk, tokens.size() - start);
    const bool last = start + count == tokens.size();
    runtime::BatchItem item{&seq, tokens.subspan(start, count),
                            last ? runtime::LogitsWanted::kLast : runtime::LogitsWanted::kNone};
    engine.step({&item, 1});
  }
}

// Linux: writing 5 to clear_refs resets the VmHWM high-water mark; elsewhere the peak keeps the probe.
void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

// VmHWM of /proc/self/status, or getrusage's maximum where that file does not exist.
uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// A context of `depth` positions with random keys and values (unit-scale, as after the k norm) and
// random recurrent and conv state.
void fill_random_context(runtime::SequenceState& seq, const model::Config& c, int64_t depth,
                         std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> k(static_cast<size_t>(c.n_head_kv * c.head_dim)), v(k.size());
  for (int64_t slot = 0; slot < c.n_attention_layers(); ++slot) {
    for (int64_t pos = 0; pos < depth; ++pos) {
      for (size_t i = 0; i < k.size(); ++i) k[i] = normal(rng), v[i] = normal(rng);
      seq.store_kv(slot, pos, k.data(), v.data());
    }
  }
  for (int64_t slot = 0; slot < c.n_layer - c.n_attention_layers(); ++slot) {
    for (float& x : seq.recurrent_state(slot)) x = 0.01f * normal(rng);
    for (float& x : seq.conv_state(slot)) x = normal(rng);
  }
  seq.advance(depth);
}

// Tokens each sequence of `test` holds.
int64_t test_capacity(const BenchTest& test) {
  return std::max<int64_t>(1, test.depth + test.prompt_tokens + test.gen_tokens);
}

// A sequence for one repetition of `test`, its depth filled (untimed).
runtime::SequenceState new_test_sequence(runtime::Engine& engine, const BenchTest& test,
                                         const BenchOptions& options, std::mt19937& rng) {
  const model::Model& model = engine.model();
  runtime::SequenceState seq = engine.new_sequence(test_capacity(test), options.kv);
  if (test.depth > 0 && options.synthetic_depth) fill_random_context(seq, model.config(), test.depth, rng);
  if (test.depth > 0 && !options.synthetic_depth) feed(engine, seq, synthetic_tokens(model, test.depth, rng));
  return seq;
}

// The sequences of one tg test and the tokens each of them decodes.
struct DecodeRun {
  std::vector<runtime::SequenceState> sequences;
  std::vector<std::vector<int32_t>> tokens;  // [sequence][step]
  std::vector<runtime::BatchItem> items;     // one step's, reused

  uint64_t state_bytes() const {
    uint64_t bytes = 0;
    for (const runtime::SequenceState& seq : sequences) bytes += seq.bytes();
    return bytes;
  }
};

DecodeRun new_decode_run(runtime::Engine& engine, const BenchTest& test, const BenchOptions& options,
                         std::mt19937& rng) {
  DecodeRun run;
  for (int64_t s = 0; s < test.parallel; ++s) {
    run.sequences.push_back(new_test_sequence(engine, test, options, rng));
    run.tokens.push_back(synthetic_tokens(engine.model(), test.gen_tokens, rng));
  }
  run.items.resize(run.sequences.size());
  return run;
}

// Decode step `i` of every sequence of `run` at once, each as `tern run` takes a greedy step: the head
// with its pick.
void decode_step(runtime::Engine& engine, DecodeRun& run, int64_t i) {
  for (size_t s = 0; s < run.sequences.size(); ++s) {
    run.items[s] = runtime::BatchItem{&run.sequences[s],
                                      {&run.tokens[s][static_cast<size_t>(i)], 1},
                                      runtime::LogitsWanted::kLast,
                                      true,
                                      true};
  }
  engine.step(run.items);
}

// Tokens per second of one repetition: the depth filled untimed, then the pp, tg or pp+tg part timed (a tg
// test's tokens of all its sequences; a pp+tg test's prompt and generated tokens over their time
// together). max_state_bytes grows to the state its sequences hold.
double run_once(runtime::Engine& engine, const BenchTest& test, const BenchOptions& options,
                std::mt19937& rng, uint64_t& max_state_bytes) {
  if (kind_of(test) == TestKind::kPrompt) {
    runtime::SequenceState seq = new_test_sequence(engine, test, options, rng);
    max_state_bytes = std::max<uint64_t>(max_state_bytes, seq.bytes());
    const std::vector<int32_t> tokens = synthetic_tokens(engine.model(), test.prompt_tokens, rng);
    const auto start = Clock::now();
    feed(engine, seq, tokens);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return static_cast<double>(tokens.size()) / std::max(seconds, 1e-9);
  }
  DecodeRun run = new_decode_run(engine, test, options, rng);
  max_state_bytes = std::max(max_state_bytes, run.state_bytes());
  const std::vector<int32_t> prompt = synthetic_tokens(engine.model(), test.prompt_tokens, rng);
  const auto start = Clock::now();
  for (runtime::SequenceState& seq : run.sequences) feed(engine, seq, prompt);
  for (int64_t i = 0; i < test.gen_tokens; ++i) decode_step(engine, run, i);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>((test.prompt_tokens + test.gen_tokens) * test.parallel) /
         std::max(seconds, 1e-9);
}

// One repetition of every tg test at once: their sequences held together, one token of each in turn,
// each token timed on its own. Tests at different depths then spread over the same seconds of a shared
// host instead of following one another. max_state_bytes grows to their sum.
void run_interleaved(runtime::Engine& engine, const std::vector<BenchTest*>& tests,
                     const BenchOptions& options, std::mt19937& rng, uint64_t& max_state_bytes) {
  std::vector<DecodeRun> runs;
  uint64_t held = 0;
  int64_t longest = 0;
  for (const BenchTest* test : tests) {
    runs.push_back(new_decode_run(engine, *test, options, rng));
    held += runs.back().state_bytes();
    longest = std::max(longest, test->gen_tokens);
  }
  max_state_bytes = std::max(max_state_bytes, held);
  std::vector<double> seconds(tests.size(), 0.0);
  for (int64_t i = 0; i < longest; ++i) {
    for (size_t j = 0; j < tests.size(); ++j) {
      if (i >= tests[j]->gen_tokens) continue;
      const auto start = Clock::now();
      decode_step(engine, runs[j], i);
      seconds[j] += std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
  for (size_t j = 0; j < tests.size(); ++j) {
    tests[j]->tok_s.push_back(static_cast<double>(tests[j]->gen_tokens * tests[j]->parallel) /
                              std::max(seconds[j], 1e-9));
  }
}

// The buffer the probe streams for a --bandwidth-bytes of `requested`. One that fits in cache measures the
// cache, and the decode fraction against it means nothing; one past the memory available would meet the
// OOM killer while it is filled.
size_t probe_buffer_bytes(size_t requested) {
  if (requested != 0 && requested < kMinBandwidthBytes) {
    fail(ErrorKind::kInput,
         "--bandwidth-bytes must be at least {} (64 MiB: the probe streams from memory) or 0 (sized to the "
         "machine), got {}",
         kMinBandwidthBytes, requested);
  }
  const size_t bytes = requested != 0 ? requested : default_bandwidth_bytes();
  require_memory(bytes, "--bandwidth-bytes", " of probe buffer");
  return bytes;
}

// Each thread count once (a second run of the same count would take another's depth-0 rounds as its
// twins), and on the ref backend, which computes on one thread, one count of 0 or 1 and no pinning.
void check_thread_counts(const BenchOptions& options) {
  if (options.threads.empty()) fail(ErrorKind::kInput, "no thread count given");
  for (size_t i = 0; i < options.threads.size(); ++i) {
    const int threads = options.threads[i];
    if (threads < 0 || threads > ThreadPool::kMaxThreads)
      fail(ErrorKind::kInput, "-t: thread counts must be 0 to {}, got {}", ThreadPool::kMaxThreads, threads);
    for (size_t j = 0; j < i; ++j) {
      const int earlier = options.threads[j];
      if (earlier == threads) fail(ErrorKind::kInput, "-t: {} given twice", threads);
      if (ThreadPool::resolve(earlier) == ThreadPool::resolve(threads)) {
        fail(ErrorKind::kInput, "-t: {} and {} are both {} threads (0 is every allowed CPU)", earlier,
             threads, ThreadPool::resolve(threads));
      }
    }
  }
  if (options.backend == runtime::Backend::kRef && options.threads.size() > 1)
    fail(ErrorKind::kInput, "--backend ref runs on one thread: give one -t");
  runtime::check_compute_options(options.backend, options.threads.front(), options.pin_threads);
}

// The threads a -t count computes on: the ref backend's one, or the pool's.
int compute_threads(const BenchOptions& options, int threads) {
  return options.backend == runtime::Backend::kRef ? 1 : ThreadPool::resolve(threads);
}

bool any_positive(const std::vector<int64_t>& counts) {
  return std::any_of(counts.begin(), counts.end(), [](int64_t n) { return n > 0; });
}

// An option that would change nothing the tests run is a mistake: refused rather than ignored.
void refuse_idle_options(const BenchOptions& options) {
  const bool tg_test = any_positive(options.gen_tokens);
  const bool parallel =
      std::any_of(options.parallel.begin(), options.parallel.end(), [](int64_t n) { return n > 1; });
  if (parallel && !tg_test) fail(ErrorKind::kInput, "--parallel applies to tg tests: give a positive -n");
  if (options.interleave_decode && !tg_test)
    fail(ErrorKind::kInput, "--interleave runs tg tests together: give a positive -n");
  if (options.synthetic_depth && !any_positive(options.depths))
    fail(ErrorKind::kInput, "--synthetic-depth fills a depth: give a positive -d");
}

void validate(const BenchOptions& options) {
  if (options.repetitions < 1)
    fail(ErrorKind::kInput, "repetitions must be >= 1, got {}", options.repetitions);
  check_thread_counts(options);
  // Checked before the model loads: a probe that cannot fit is refused without waiting for the load.
  (void)probe_buffer_bytes(options.bandwidth_bytes);
  const auto out_of_range = [](const std::vector<int64_t>& v) {
    return std::any_of(v.begin(), v.end(), [](int64_t x) { return x < 0 || x > kMaxTestTokens; });
  };
  if (out_of_range(options.prompt_tokens) || out_of_range(options.gen_tokens) ||
      out_of_range(options.depths)) {
    fail(ErrorKind::kInput, "prompt, generation and depth counts must be 0 to {}", kMaxTestTokens);
  }
  for (const PromptThenGen& test : options.prompt_then_gen) {
    if (test.prompt_tokens < 1 || test.prompt_tokens > kMaxTestTokens || test.gen_tokens < 1 ||
        test.gen_tokens > kMaxTestTokens) {
      fail(ErrorKind::kInput, "--pg takes prompt and generation counts of 1 to {}, got {},{}", kMaxTestTokens,
           test.prompt_tokens, test.gen_tokens);
    }
  }
  if (!any_positive(options.prompt_tokens) && !any_positive(options.gen_tokens) &&
      options.prompt_then_gen.empty()) {
    fail(ErrorKind::kInput, "no test: give a positive -p or -n, or a --pg");
  }
  if (options.depths.empty()) fail(ErrorKind::kInput, "no depth given");
  if (options.parallel.empty() || std::any_of(options.parallel.begin(), options.parallel.end(),
                                              [](int64_t n) { return n < 1 || n > kMaxParallel; })) {
    fail(ErrorKind::kInput, "--parallel takes sequence counts of 1 to {}", kMaxParallel);
  }
  refuse_idle_options(options);
  if (options.read_only_matmuls && options.backend != runtime::Backend::kCpu)
    fail(ErrorKind::kInput, "--read-only-matmuls needs the cpu backend");
}

// The tests of one thread count, depth by depth: pp, then tg (each --parallel count), then pp+tg.
std::vector<BenchTest> plan_tests(const BenchOptions& options, int threads) {
  std::vector<BenchTest> tests;
  for (const int64_t depth : options.depths) {
    const std::string at = depth > 0 ? fmt::format(" @ d{}", depth) : "";
    for (const int64_t n : options.prompt_tokens) {
      if (n > 0) {
        tests.push_back(BenchTest{
            .name = fmt::format("pp{}{}", n, at), .prompt_tokens = n, .threads = threads, .depth = depth});
      }
    }
    for (const int64_t n : options.gen_tokens) {
      if (n <= 0) continue;
      for (const int64_t sequences : options.parallel) {
        const std::string batch = sequences > 1 ? fmt::format(" x{}", sequences) : "";
        tests.push_back(BenchTest{.name = fmt::format("tg{}{}{}", n, batch, at),
                                  .gen_tokens = n,
                                  .threads = threads,
                                  .parallel = sequences,
                                  .depth = depth});
      }
    }
    for (const PromptThenGen& pg : options.prompt_then_gen) {
      tests.push_back(BenchTest{.name = fmt::format("pp{}+tg{}{}", pg.prompt_tokens, pg.gen_tokens, at),
                                .prompt_tokens = pg.prompt_tokens,
                                .gen_tokens = pg.gen_tokens,
                                .threads = threads,
                                .depth = depth});
    }
  }
  return tests;
}

// Each test's sequences, and the interleaved tests' all at once, fit in the memory available: checked
// before the probe and the warm-up, so a depth too deep is a one-line error, not the OOM killer midway.
// Where they fit only by evicting mapped weights (--mmap), the largest is named in a warning.
void check_tests_fit_memory(const model::Model& model, const std::vector<BenchTest>& tests,
                            const BenchOptions& options) {
  const char* kv = runtime::kv_precision_name(options.kv);
  uint64_t interleaved = 0;
  uint64_t largest = 0;
  std::string largest_name;
  for (const BenchTest& test : tests) {
    const uint64_t bytes = runtime::saturating_product(
        runtime::sequence_state_bytes(model.config(), test_capacity(test), options.kv), test.parallel);
    const std::string what = fmt::format(
        "{}: {}", test.name, runtime::describe_states(test.parallel, test_capacity(test), options.kv));
    runtime::check_state_memory(bytes, what);
    if (bytes > largest) {
      largest = bytes;
      largest_name = what;
    }
    if (options.interleave_decode && kind_of(test) == TestKind::kGen)
      interleaved = runtime::saturating_sum(interleaved, bytes);
  }
  const std::string interleaved_name = fmt::format("the interleaved tests' sequences ({} KV)", kv);
  runtime::check_state_memory(interleaved, interleaved_name);
  if (interleaved > largest) {
    largest = interleaved;
    largest_name = interleaved_name;
  }
  if (const auto warning =
          runtime::mapped_weights_warning(largest, model.mapped_matrix_bytes(), largest_name))
    fmt::print(stderr, "tern: warning: {}\n", *warning);
}

void summarise(BenchTest& test) {
  double sum = 0.0;
  for (const double v : test.tok_s) sum += v;
  const auto n = static_cast<double>(test.tok_s.size());
  test.mean_tok_s = sum / n;
  double squares = 0.0;
  for (const double v : test.tok_s) squares += (v - test.mean_tok_s) * (v - test.mean_tok_s);
  test.sd_tok_s = test.tok_s.size() > 1 ? std::sqrt(squares / (n - 1.0)) : 0.0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string model_name(const model::Model& model, const std::string& path) {
  if (const gguf::Value* name = model.file().find("general.name"); name != nullptr) {
    if (const auto* text = std::get_if<std::string>(&name->data)) return *text;
  }
  return std::filesystem::path(path).filename().string();
}

}  // namespace

TestKind kind_of(const BenchTest& test) {
  if (test.gen_tokens == 0) return TestKind::kPrompt;
  return test.prompt_tokens == 0 ? TestKind::kGen : TestKind::kPromptThenGen;
}

void compare_to_depth0(std::vector<BenchTest>& tests) {
  for (BenchTest& test : tests) {
    if (test.depth == 0 || test.tok_s.empty()) continue;
    const auto twin = std::find_if(tests.begin(), tests.end(), [&](const BenchTest& t) {
      return t.depth == 0 && t.prompt_tokens == test.prompt_tokens && t.gen_tokens == test.gen_tokens &&
             t.parallel == test.parallel && t.threads == test.threads && t.tok_s.size() == test.tok_s.size();
    });
    if (twin == tests.end()) continue;
    std::vector<double> changes;
    for (size_t r = 0; r < test.tok_s.size(); ++r) changes.push_back(test.tok_s[r] / twin->tok_s[r] - 1.0);
    test.vs_depth0 = median(changes);
    test.vs_depth0_interval = median_interval(std::move(changes));
  }
}

std::optional<MedianInterval> median_interval(std::vector<double> values) {
  constexpr double kCoverage = 0.9;
  const auto n = static_cast<double>(values.size());
  // P(B = i) for B ~ Binomial(n, ½), in logs so that no term underflows before it matters.
  const auto probability = [&](double i) {
    return std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                    n * std::log(2.0));
  };
  // tail = P(B < k): widen the interval while both tails together stay within 1 − kCoverage.
  double tail = 0.0;
  size_t k = 0;
  while (2 * (k + 1) <= values.size()) {
    const double next = tail + probability(static_cast<double>(k));
    if (1.0 - 2.0 * next < kCoverage) break;
    tail = next;
    ++k;
  }
  if (k == 0) return std::nullopt;
  std::sort(values.begin(), values.end());
  return MedianInterval{values[k - 1], values[values.size() - k], 1.0 - 2.0 * tail};
}

uint64_t decode_bytes_per_token(const model::Model& model, int64_t depth, runtime::KvPrecision kv,
                                int64_t sequences) {
  const gguf::Reader& file = model.file();
  const bool tied_head = file.find_tensor("output.weight") == nullptr;
  uint64_t tensor_bytes = 0;
  for (const gguf::TensorInfo& tensor : file.tensors()) {
    if (tensor.name == "token_embd.weight" && !tied_head) continue;
    // Matrices are read in the form they are re-packed to at load (model::Model); panels are read whole,
    // padding included.
    const quant::TensorType placed = model.placed_type(tensor.type);
    tensor_bytes +=
        placed != tensor.type ? *quant::matrix_bytes(placed, tensor.rows(), tensor.ne[0]) : tensor.nbytes;
  }
  uint64_t bytes = tensor_bytes / static_cast<uint64_t>(std::max<int64_t>(sequences, 1));
  const model::Config& c = model.config();
  const auto gdn_layers = static_cast<uint64_t>(c.n_layer - c.n_attention_layers());
  bytes += 2 * 4 * gdn_layers * static_cast<uint64_t>(c.gdn_n_v * c.gdn_k_head_dim * c.gdn_v_head_dim);
  bytes += static_cast<uint64_t>(c.n_attention_layers()) * static_cast<uint64_t>(depth) *
           static_cast<uint64_t>(c.n_head_kv) *
           (runtime::kv_head_bytes(kv, c.head_dim) + runtime::kv_head_bytes(kv, c.value_dim));
  return bytes;
}

size_t default_bandwidth_bytes() {
  constexpr size_t kCacheMultiple = 16;
  const size_t cache_sized =
      std::max(size_t{1} << 30, kCacheMultiple * static_cast<size_t>(last_level_cache_bytes()));
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return cache_sized;
  const size_t quarter_of_memory = static_cast<size_t>(pages) * static_cast<size_t>(page_bytes) / 4;
  return std::max(kMinBandwidthBytes, std::min(cache_sized, quarter_of_memory));
}

kernels::cpu::ReadBandwidth measure_bandwidth(int threads, size_t bytes, bool pin) {
  const size_t size = probe_buffer_bytes(bytes);
  ThreadPool pool(ThreadPool::resolve(threads), pin);
  return kernels::cpu::measure_read_bandwidth(pool, size);
}

BandwidthProbes measure_bandwidths(const std::vector<int>& threads, size_t bytes) {
  BandwidthProbes probes;
  for (const int count : threads) {
    const kernels::cpu::ReadBandwidth read = measure_bandwidth(count, bytes, false);
    probes.by_threads.push_back({ThreadPool::resolve(count), read.best_gb_s, read.median_gb_s});
    probes.bytes = read.bytes;
  }
  return probes;
}

nlohmann::ordered_json bandwidth_json(const std::vector<ThreadsBandwidth>& probes, size_t probe_bytes) {
  nlohmann::ordered_json out{{"threads", probes.front().threads},
                             {"bandwidth_gb_s", probes.front().best_gb_s},
                             {"bandwidth_median_gb_s", probes.front().median_gb_s},
                             {"bandwidth_probe_bytes", probe_bytes},
                             {"bandwidth", nlohmann::ordered_json::array()}};
  for (const ThreadsBandwidth& probe : probes) {
    out["bandwidth"].push_back({{"threads", probe.threads},
                                {"bandwidth_gb_s", probe.best_gb_s},
                                {"bandwidth_median_gb_s", probe.median_gb_s}});
  }
  return out;
}

std::string describe_probe(const ThreadsBandwidth& probe, size_t probe_bytes) {
  return fmt::format("{:.2f} GB/s best pass, {:.2f} median ({} thread{}, {:.2f} GiB probe)", probe.best_gb_s,
                     probe.median_gb_s, probe.threads, probe.threads == 1 ? "" : "s",
                     static_cast<double>(probe_bytes) / kGiB);
}

namespace {

// What one thread count's run leaves beside its tests' samples.
struct ThreadCountRun {
  ThreadsBandwidth bandwidth;
  size_t probe_bytes = 0;
  uint64_t peak_rss_bytes = 0;  // over its tests, the probes' buffers left out
  uint64_t max_state_bytes = 0;
};

// The tests of one thread count on an engine of their own, between two probes on as many threads (the
// engine's: the ref backend runs on one). The generator starts afresh, so `-t 1,2` runs on 2 threads what
// `-t 2` alone runs.
ThreadCountRun run_thread_count(const model::Model& model, std::span<BenchTest> tests,
                                const BenchOptions& options) {
  // Every step asks for each sequence's last row only, so one logit row a sequence (1 MB at a 248k
  // vocabulary, not 512 MB for max_batch_tokens rows) is all the scratch the head needs.
  const int64_t most_parallel = *std::max_element(options.parallel.begin(), options.parallel.end());
  runtime::Engine engine(model, runtime::EngineOptions{.max_logit_rows = most_parallel,
                                                       .backend = options.backend,
                                                       .threads = tests.front().threads,
                                                       .pin_threads = options.pin_threads,
                                                       .read_only_matmuls = options.read_only_matmuls});
  ThreadCountRun run;
  const kernels::cpu::ReadBandwidth before =
      measure_bandwidth(engine.threads(), options.bandwidth_bytes, options.pin_threads);
  run.probe_bytes = before.bytes;
  reset_peak_rss();  // the probe's buffer is not the model's memory
  std::mt19937 rng(options.seed);
  {  // warm-up: one decode step maps every weight page in (and wakes the pool) before anything is timed
    const BenchTest warm{.gen_tokens = 1};
    run_once(engine, warm, options, rng, run.max_state_bytes);
  }
  // Repetitions go round the tests (each test once, then each again): a shared host's speed drifts by
  // tens of percent within minutes, and taking turns gives every test the same mix of the host's phases,
  // so a ratio between tests (depth 8k against 0, say) measures the tests, not the drift between them.
  std::vector<BenchTest*> alone, interleaved;
  for (BenchTest& test : tests)
    (options.interleave_decode && kind_of(test) == TestKind::kGen ? interleaved : alone).push_back(&test);
  for (int r = 0; r < options.repetitions; ++r) {
    for (BenchTest* test : alone)
      test->tok_s.push_back(run_once(engine, *test, options, rng, run.max_state_bytes));
    if (!interleaved.empty()) run_interleaved(engine, interleaved, options, rng, run.max_state_bytes);
  }
  run.peak_rss_bytes = peak_rss_bytes();
  // Probed again after the tests: a shared host's bandwidth drifts by tens of percent within minutes, and
  // against the better of the two probes the fraction can understate, never overstate.
  const kernels::cpu::ReadBandwidth after =
      measure_bandwidth(engine.threads(), options.bandwidth_bytes, options.pin_threads);
  run.bandwidth = {engine.threads(), std::max(before.best_gb_s, after.best_gb_s),
                   std::max(before.median_gb_s, after.median_gb_s)};
  for (BenchTest& test : tests) test.bandwidth_gb_s = run.bandwidth.best_gb_s;
  return run;
}

}  // namespace

BenchReport run_bench(const BenchOptions& options) {
  validate(options);
  const auto model = model::Model::open(options.model_path, options.load);
  BenchReport report;
  report.model = model_name(*model, options.model_path);
  report.file = options.model_path;
  report.backend = runtime::backend_name(options.backend);
  report.read_only_matmuls = options.read_only_matmuls;
  if (options.read_only_matmuls) report.backend += ", read-only matmuls";
  report.isa = cpu_features().describe();
  report.weights = options.load.placement == model::WeightPlacement::kMapped ? "mapped" : "huge pages";
  const quant::TensorType ptq1 = model->placed_type(quant::TensorType::kPTQ1_0);
  if (model->file().holds_type(quant::TensorType::kPTQ1_0))
    report.weights += fmt::format(", PTQ1_0 as {}", quant::traits(ptq1).name);
  const quant::TensorType pq2 = model->placed_type(quant::TensorType::kPQ2_0);
  if (pq2 != quant::TensorType::kPQ2_0 && model->file().holds_type(quant::TensorType::kPQ2_0))
    report.weights += fmt::format(", PQ2_0 as {}", quant::traits(pq2).name);
  for (const gguf::TensorInfo& tensor : model->file().tensors()) report.model_bytes += tensor.nbytes;
  check_tests_fit_memory(*model, plan_tests(options, compute_threads(options, options.threads.front())),
                         options);

  for (const int threads : options.threads) {
    std::vector<BenchTest> planned = plan_tests(options, compute_threads(options, threads));
    std::move(planned.begin(), planned.end(), std::back_inserter(report.tests));
  }
  const size_t tests_per_count = report.tests.size() / options.threads.size();
  for (size_t first = 0; first < report.tests.size(); first += tests_per_count) {
    const ThreadCountRun run =
        run_thread_count(*model, std::span(report.tests).subspan(first, tests_per_count), options);
    report.bandwidths.push_back(run.bandwidth);
    report.bandwidth_bytes = run.probe_bytes;
    report.peak_rss_bytes = std::max(report.peak_rss_bytes, run.peak_rss_bytes);
    report.max_kv_bytes = std::max(report.max_kv_bytes, run.max_state_bytes);
  }
  for (BenchTest& test : report.tests) summarise(test);
  compare_to_depth0(report.tests);
  for (BenchTest& test : report.tests) {
    if (kind_of(test) != TestKind::kGen) continue;
    // the mean depth over the generated tokens
    test.bytes_per_token =
        decode_bytes_per_token(*model, test.depth + test.gen_tokens / 2, options.kv, test.parallel);
    test.decode_bandwidth_fraction =
        static_cast<double>(test.bytes_per_token) * test.mean_tok_s / (test.bandwidth_gb_s * 1e9);
  }
  for (const BenchTest& test : report.tests) {
    if (kind_of(test) == TestKind::kPrompt && report.prefill_tok_s == 0.0)
      report.prefill_tok_s = test.mean_tok_s;
    if (kind_of(test) == TestKind::kGen && report.decode_tok_s == 0.0) {
      report.decode_tok_s = test.mean_tok_s;
      report.bytes_per_token = test.bytes_per_token;
      report.decode_bandwidth_fraction = test.decode_bandwidth_fraction;
    }
  }
  return report;
}

nlohmann::ordered_json bench_json(const BenchReport& report) {
  nlohmann::ordered_json out;
  out["model"] = report.model;
  out["file"] = report.file;
  out["model_bytes"] = report.model_bytes;
  out["backend"] = report.backend;
  out["read_only_matmuls"] = report.read_only_matmuls;
  out["isa"] = report.isa;
  out["weights"] = report.weights;
  out.update(bandwidth_json(report.bandwidths, report.bandwidth_bytes));
  out["prefill_tok_s"] = report.prefill_tok_s;
  out["decode_tok_s"] = report.decode_tok_s;
  out["bytes_per_token"] = report.bytes_per_token;
  out["peak_rss_bytes"] = report.peak_rss_bytes;
  out["max_kv_bytes"] = report.max_kv_bytes;
  out["decode_bandwidth_fraction"] = report.decode_bandwidth_fraction;
  out["tests"] = nlohmann::ordered_json::array();
  for (const BenchTest& test : report.tests) {
    nlohmann::ordered_json t;
    t["test"] = test.name;
    t["n_prompt"] = test.prompt_tokens;
    t["n_gen"] = test.gen_tokens;
    t["depth"] = test.depth;
    t["threads"] = test.threads;
    if (kind_of(test) == TestKind::kGen) t["parallel"] = test.parallel;
    t["tok_s"] = test.mean_tok_s;
    t["tok_s_sd"] = test.sd_tok_s;
    t["samples_tok_s"] = test.tok_s;
    t["bandwidth_gb_s"] = test.bandwidth_gb_s;
    if (kind_of(test) == TestKind::kGen) {
      t["bytes_per_token"] = test.bytes_per_token;
      t["decode_bandwidth_fraction"] = test.decode_bandwidth_fraction;
    }
    if (test.vs_depth0) t["vs_depth0"] = *test.vs_depth0;
    if (const auto& interval = test.vs_depth0_interval) {
      t["vs_depth0_low"] = interval->low;
      t["vs_depth0_high"] = interval->high;
      t["vs_depth0_coverage"] = interval->coverage;
    }
    out["tests"].push_back(std::move(t));
  }
  return out;
}

namespace {

// "−7.6%", and with an interval "−7.6% (−17.2 … +0.5, 96%)".
std::string depth_change(const BenchTest& test) {
  if (!test.vs_depth0) return "";
  std::string out = fmt::format("{:+.1f}%", 100.0 * *test.vs_depth0);
  if (const auto& interval = test.vs_depth0_interval) {
    out += fmt::format(" ({:+.1f} … {:+.1f}, {:.0f}%)", 100.0 * interval->low, 100.0 * interval->high,
                       std::floor(100.0 * interval->coverage));
  }
  return out;
}

}  // namespace

std::string bench_markdown(const BenchReport& report) {
  const bool depths = std::any_of(report.tests.begin(), report.tests.end(),
                                  [](const BenchTest& test) { return test.vs_depth0.has_value(); });
  std::string out = fmt::format(
      "| model | size | backend | threads | test | t/s | bytes/token | of bandwidth |{}\n"
      "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |{}\n",
      depths ? " vs depth 0 (median pair; interval, coverage) |" : "", depths ? " ---: |" : "");
  for (const BenchTest& test : report.tests) {
    const bool decode = kind_of(test) == TestKind::kGen;
    out +=
        fmt::format("| {} | {:.2f} MiB | {} | {} | {} | {:.2f} ± {:.2f} | {} | {} |", report.model,
                    static_cast<double>(report.model_bytes) / (1024.0 * 1024.0), report.backend, test.threads,
                    test.name, test.mean_tok_s, test.sd_tok_s,
                    decode ? fmt::format("{:.2f} MB", static_cast<double>(test.bytes_per_token) / 1e6) : "",
                    decode ? fmt::format("{:.1f}%", 100.0 * test.decode_bandwidth_fraction) : "");
    if (depths) out += fmt::format(" {} |", depth_change(test));
    out += "\n";
  }
  std::string probes;
  for (const ThreadsBandwidth& probe : report.bandwidths) {
    probes += (probes.empty() ? "" : "; ") + describe_probe(probe, report.bandwidth_bytes);
  }
  out += fmt::format("\nstreaming read bandwidth: {}; isa: {}; weights: {}\n", probes, report.isa,
                     report.weights);
  out += fmt::format("peak RSS {:.1f} MiB (file {:.1f} MiB, sequence state held at once {:.1f} MiB)\n",
                     static_cast<double>(report.peak_rss_bytes) / (1024.0 * 1024.0),
                     static_cast<double>(report.model_bytes) / (1024.0 * 1024.0),
                     static_cast<double>(report.max_kv_bytes) / (1024.0 * 1024.0));
  return out;
}

}  // namespace tern::tools
