// tern bench through the CLI on the tiny model: the JSON report has its keys and positive figures, depth
// tests carry their median pair against depth 0, and the decode byte count follows from the model's
// tensors and state.
#include "tools/bench.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "quant/pq2_panels.h"
#include "quant/types.h"
#include "tests/model/tiny_model.h"

namespace tern::tools {
namespace {

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf;
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

// run_bench refuses `options` with an error of `kind` that says `message`.
void expect_refused(const BenchOptions& options, const std::string& message,
                    ErrorKind kind = ErrorKind::kInput) {
  try {
    run_bench(options);
    ADD_FAILURE() << "expected an error: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

// -t 0 counts the CPUs the process may run on: under taskset (or a container's cpuset), not every online
// CPU, which put 64 threads on a 4-CPU container of a 64-CPU host.
TEST(BenchCli, EveryThreadMeansEveryCpuTheProcessMayRunOn) {
  if (std::system("taskset -V > /dev/null 2>&1") != 0) GTEST_SKIP() << "no taskset here";
  const std::string out =
      run_command(fmt::format("taskset -c {} {} bench --memory-bandwidth -t 0 --bandwidth-bytes "
                              "67108864 --json",
                              ThreadPool::allowed_cpus().back(), TERN_BINARY));
  EXPECT_EQ(nlohmann::json::parse(out)["threads"], 1) << out;
}

TEST(BenchCli, JsonReportHasPositiveFigures) {
  const std::string out =
      run_command(std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                  " -p 16 -n 4 -r 1 -t 2 --bandwidth-bytes 67108864 --json");
  const auto report = nlohmann::json::parse(out);
  for (const char* key :
       {"prefill_tok_s", "decode_tok_s", "bytes_per_token", "bandwidth_gb_s", "decode_bandwidth_fraction"}) {
    ASSERT_TRUE(report.contains(key)) << key;
    EXPECT_GT(report[key].get<double>(), 0.0) << key;
  }
  EXPECT_EQ(report["threads"], 2);
  EXPECT_EQ(report["bandwidth_probe_bytes"], 67108864);
  EXPECT_LE(report["bandwidth_median_gb_s"].get<double>(), report["bandwidth_gb_s"].get<double>());
  EXPECT_EQ(report["backend"], "cpu");
  EXPECT_EQ(report["read_only_matmuls"], false);
  EXPECT_FALSE(report["isa"].get<std::string>().empty());
  ASSERT_EQ(report["tests"].size(), 2u);
  EXPECT_EQ(report["tests"][0]["test"], "pp16");
  EXPECT_EQ(report["tests"][1]["test"], "tg4");
}

// The ceiling mode swaps the ternary kernels for reads of their weights and says so in the report.
TEST(BenchCli, ReadOnlyMatmulsAreReportedAsSuch) {
  const std::string out =
      run_command(std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                  " -p 0 -n 4 -r 1 -t 2 --bandwidth-bytes 67108864 --read-only-matmuls --json");
  const auto report = nlohmann::json::parse(out);
  EXPECT_EQ(report["backend"], "cpu, read-only matmuls");
  EXPECT_EQ(report["read_only_matmuls"], true);
  EXPECT_GT(report["decode_tok_s"].get<double>(), 0.0);
}

TEST(BenchOptions, ReadOnlyMatmulsNeedTheCpuBackend) {
  BenchOptions options;
  options.model_path = testing_support::tiny_pq2_model();
  options.backend = runtime::Backend::kRef;
  options.read_only_matmuls = true;
  expect_refused(options, "--read-only-matmuls needs the cpu backend");
}

// A probe buffer that fits in a cache would measure the cache, one past the memory cannot be made; a thread
// count no machine has is a mistake.
TEST(BenchOptions, RejectAProbeSmallerThan64MiBOrPastTheMemoryAndTooManyThreads) {
  BenchOptions small_probe;
  small_probe.model_path = testing_support::tiny_pq2_model();
  small_probe.bandwidth_bytes = kMinBandwidthBytes - 1;
  BenchOptions too_many = small_probe;
  too_many.bandwidth_bytes = kMinBandwidthBytes;
  too_many.threads = {2, 100000};
  const std::pair<const BenchOptions*, const char*> cases[] = {
      {&small_probe, "--bandwidth-bytes must be at least 67108864"},
      {&too_many, "-t: thread counts must be 0 to 1024, got 100000"}};
  for (const auto& [options, message] : cases) expect_refused(*options, message);
  EXPECT_THROW(measure_bandwidth(2, 4096, false), Error);
  // A probe past the memory available is refused before it is mapped: 2^64 - 1 bytes wrapped to a
  // mapping of 0 bytes, and a size near the memory met the OOM killer.
  try {
    (void)measure_bandwidth(2, std::numeric_limits<size_t>::max(), false);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_NE(std::string(e.what()).find("--bandwidth-bytes: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(" GiB of probe buffer needed, "), std::string::npos) << e.what();
  }
  // And by run_bench before the model loads: no file is read to find out.
  BenchOptions huge_probe;
  huge_probe.model_path = "/nonexistent/model.gguf";
  huge_probe.bandwidth_bytes = std::numeric_limits<size_t>::max();
  expect_refused(huge_probe, " GiB of probe buffer needed, ", ErrorKind::kCapacity);
}

// A thread count run twice would take the other run's depth-0 rounds as its twins; the ref backend computes
// on one thread, refuses more or pinning, and its tests say 1 thread.
TEST(BenchOptions, EachThreadCountOnceAndOneOnTheRefBackend) {
  BenchOptions twice;
  twice.model_path = testing_support::tiny_pq2_model();
  twice.bandwidth_bytes = kMinBandwidthBytes;
  twice.threads = {2, 1, 2};
  BenchOptions every_thread = twice;
  every_thread.threads = {static_cast<int>(ThreadPool::resolve(0)), 0};
  BenchOptions ref = twice;
  ref.backend = runtime::Backend::kRef;
  ref.threads = {1, 2};
  expect_refused(twice, "-t: 2 given twice");
  expect_refused(every_thread,
                 fmt::format("are both {} threads (0 is every allowed CPU)", ThreadPool::resolve(0)));
  expect_refused(ref, "--backend ref runs on one thread: give one -t");
  ref.threads = {2};
  expect_refused(ref, "-t 2: the ref backend computes on one thread (give -t 0 or 1)");
  ref.threads = {0};
  ref.pin_threads = true;
  expect_refused(ref, "--pin: the ref backend computes on one thread, with no pool to pin");
  ref.pin_threads = false;
  ref.prompt_tokens = {0};
  ref.gen_tokens = {1};
  ref.repetitions = 1;
  const BenchReport report = run_bench(ref);
  EXPECT_EQ(report.tests.front().threads, 1);
  EXPECT_EQ(report.bandwidths.front().threads, 1);
}

// A probe buffer a few times the last-level cache is partly read from it: the default is sized to the
// cache, within what the machine's memory allows.
TEST(BenchOptions, DefaultProbeStreamsSixteenTimesTheLastLevelCacheWhereMemoryAllows) {
  const size_t memory =
      static_cast<size_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t wanted = std::max(size_t{1} << 30, 16 * static_cast<size_t>(last_level_cache_bytes()));
  const size_t bytes = default_bandwidth_bytes();
  EXPECT_EQ(bytes, std::max(kMinBandwidthBytes, std::min(wanted, memory / 4)));
  EXPECT_GE(bytes, kMinBandwidthBytes);
}

// Each ratio pairs a depth test's repetition with its depth-0 twin's of the same round; the median
// ignores the one round a host's phase threw off, where the ratio of the means would not.
TEST(BenchDepth, ComparesEachRoundWithItsDepthZeroTwinByTheMedian) {
  std::vector<BenchTest> tests(5);
  tests[0] = {.name = "tg32", .gen_tokens = 32, .threads = 1, .tok_s = {5.0, 6.0, 7.0, 4.0}};
  tests[1] = {
      .name = "tg32 @ d8192", .gen_tokens = 32, .threads = 1, .depth = 8192, .tok_s = {4.5, 5.4, 7.7, 2.0}};
  tests[2] = {.name = "pp16 @ d8192",
              .prompt_tokens = 16,
              .threads = 1,
              .depth = 8192,
              .tok_s = {9.0, 9.0, 9.0, 9.0}};
  tests[3] = {.name = "tg32 @ d1024", .gen_tokens = 32, .threads = 1, .depth = 1024, .tok_s = {4.0, 4.0}};
  tests[4] = {
      .name = "tg32 @ d8192", .gen_tokens = 32, .threads = 2, .depth = 8192, .tok_s = {4.5, 5.4, 7.7, 2.0}};
  compare_to_depth0(tests);
  EXPECT_FALSE(tests[4].vs_depth0);  // its twin ran on another thread count
  EXPECT_FALSE(tests[0].vs_depth0);  // the twin itself
  ASSERT_TRUE(tests[1].vs_depth0);
  EXPECT_NEAR(*tests[1].vs_depth0, -0.1, 1e-12);  // ratios 0.9, 0.9, 1.1, 0.5: median 0.9
  EXPECT_FALSE(tests[2].vs_depth0);               // no pp16 at depth 0
  EXPECT_FALSE(tests[3].vs_depth0);               // rounds that do not pair up
  EXPECT_FALSE(tests[1].vs_depth0_interval);      // four rounds: even [min, max] covers only 87.5%
}

// Distribution-free: the median lies below the k-th of n values with probability P(B < k), B ~ Bin(n, ½).
TEST(BenchDepth, MedianIntervalTakesTheWidestOrderStatisticsThatCoverNinetyPercent) {
  EXPECT_FALSE(median_interval({}));
  EXPECT_FALSE(median_interval({0.1, 0.2, 0.3, 0.4}));
  const auto five = median_interval({0.3, -0.2, 0.1, 0.5, -0.4});
  ASSERT_TRUE(five);
  EXPECT_EQ(five->low, -0.4);
  EXPECT_EQ(five->high, 0.5);
  EXPECT_NEAR(five->coverage, 1.0 - 2.0 / 32.0, 1e-12);
  // Fifteen: P(B ≤ 3) = 576 / 2^15 keeps 96.5%; P(B ≤ 4) = 1941 / 2^15 would leave 88.2%.
  std::vector<double> fifteen;
  for (int i = 15; i >= 1; --i) fifteen.push_back(i / 100.0);
  const auto interval = median_interval(fifteen);
  ASSERT_TRUE(interval);
  EXPECT_EQ(interval->low, 0.04);
  EXPECT_EQ(interval->high, 0.12);
  EXPECT_NEAR(interval->coverage, 1.0 - 2.0 * 576.0 / 32768.0, 1e-12);
  // Many rounds narrow it around the median without a term underflowing to an empty tail.
  std::vector<double> many;
  for (int i = 0; i < 4001; ++i) many.push_back(i);
  const auto narrow = median_interval(many);
  ASSERT_TRUE(narrow);
  EXPECT_GT(narrow->low, 1900.0);
  EXPECT_LT(narrow->low, 2000.0);
  EXPECT_EQ(narrow->high, 4000.0 - narrow->low);
  EXPECT_GE(narrow->coverage, 0.9);
  EXPECT_LT(narrow->coverage, 0.92);
}

TEST(BenchCli, DepthTestsReportTheirMedianPairAgainstDepthZero) {
  const std::string command = std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                              " -p 0 -n 4 -d 0,16 --synthetic-depth -r 3 -t 2 --bandwidth-bytes 67108864";
  const auto report = nlohmann::json::parse(run_command(command + " --json"));
  ASSERT_EQ(report["tests"].size(), 2u);
  EXPECT_FALSE(report["tests"][0].contains("vs_depth0"));
  ASSERT_TRUE(report["tests"][1].contains("vs_depth0"));
  EXPECT_GT(report["tests"][1]["vs_depth0"].get<double>(), -1.0);
  EXPECT_FALSE(report["tests"][1].contains("vs_depth0_low"));  // three rounds give no interval
  EXPECT_NE(run_command(command).find("vs depth 0 (median pair; interval, coverage)"), std::string::npos);
}

TEST(BenchCli, FiveRoundsAtDepthAlsoReportAnIntervalForTheMedianPair) {
  const std::string command = std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                              " -p 0 -n 2 -d 0,16 --synthetic-depth -r 5 -t 2 --bandwidth-bytes 67108864";
  const auto test = nlohmann::json::parse(run_command(command + " --json"))["tests"][1];
  const double low = test["vs_depth0_low"].get<double>(), high = test["vs_depth0_high"].get<double>();
  EXPECT_LE(low, test["vs_depth0"].get<double>());
  EXPECT_GE(high, test["vs_depth0"].get<double>());
  EXPECT_NEAR(test["vs_depth0_coverage"].get<double>(), 0.9375, 1e-12);
  EXPECT_NE(run_command(command).find(", 93%)"), std::string::npos);
}

// --interleave runs the tg tests of a round together: every test still gets one sample a round, and the
// states of the tg tests are held at once, so the most state held is their sum, above any one test's.
TEST(BenchCli, InterleavedDecodeHoldsEveryTgTestsStateAtOnce) {
  const std::string command =
      std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
      " -p 8 -n 2 -d 0,64 --synthetic-depth -r 2 -t 2 --bandwidth-bytes 67108864 --json";
  const auto apart = nlohmann::json::parse(run_command(command));
  const auto together = nlohmann::json::parse(run_command(command + " --interleave"));
  ASSERT_EQ(together["tests"].size(), 4u);
  for (const auto& test : together["tests"]) {
    EXPECT_EQ(test["samples_tok_s"].size(), 2u) << test["test"];
    for (const auto& sample : test["samples_tok_s"]) EXPECT_GT(sample.get<double>(), 0.0) << test["test"];
  }
  EXPECT_GT(together["max_kv_bytes"].get<uint64_t>(), apart["max_kv_bytes"].get<uint64_t>());
}

// --parallel decodes several sequences in lockstep: a tg test per count, its t/s over every sequence's
// tokens, its bytes a token with the tensors shared, and every sequence's state held at once.
TEST(BenchCli, ParallelDecodeRunsATgTestPerSequenceCount) {
  const std::string command = std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                              " -p 0 -n 4 -r 1 -t 2 --bandwidth-bytes 67108864 --json --parallel ";
  const auto both = nlohmann::json::parse(run_command(command + "1,3"));
  ASSERT_EQ(both["tests"].size(), 2u);
  const auto& one = both["tests"][0];
  const auto& three = both["tests"][1];
  EXPECT_EQ(one["test"], "tg4");
  EXPECT_EQ(three["test"], "tg4 x3");
  EXPECT_EQ(one["parallel"], 1);
  EXPECT_EQ(three["parallel"], 3);
  EXPECT_GT(three["tok_s"].get<double>(), 0.0);
  const auto model = model::Model::open(testing_support::tiny_pq2_model());
  EXPECT_EQ(three["bytes_per_token"].get<uint64_t>(),
            decode_bytes_per_token(*model, 2, runtime::KvPrecision::kF16, 3));
  EXPECT_LT(three["bytes_per_token"].get<uint64_t>(), one["bytes_per_token"].get<uint64_t>());
  const auto alone = nlohmann::json::parse(run_command(command + "1"));
  const auto batched = nlohmann::json::parse(run_command(command + "3"));
  EXPECT_EQ(batched["max_kv_bytes"].get<uint64_t>(), 3 * alone["max_kv_bytes"].get<uint64_t>());
}

TEST(BenchOptions, RejectAParallelCountOutsideOneTo256) {
  for (const int64_t sequences : {int64_t{0}, kMaxParallel + 1}) {
    BenchOptions options;
    options.model_path = testing_support::tiny_pq2_model();
    options.bandwidth_bytes = kMinBandwidthBytes;
    options.parallel = {1, sequences};
    expect_refused(options, "--parallel takes sequence counts of 1 to 256");
  }
}

// -t as a list runs every test on each thread count, each against a probe on as many threads; the
// headline figures are the first count's.
TEST(BenchCli, AThreadListRunsEveryTestOnEachCountAgainstItsOwnProbe) {
  const auto report = nlohmann::json::parse(
      run_command(std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                  " -p 8 -n 2 -r 1 -t 1,2 --bandwidth-bytes 67108864 --json"));
  ASSERT_EQ(report["bandwidth"].size(), 2u);
  ASSERT_EQ(report["tests"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const auto& test = report["tests"][i];
    const auto& probe = report["bandwidth"][i / 2];
    EXPECT_EQ(test["test"], i % 2 == 0 ? "pp8" : "tg2");
    EXPECT_EQ(test["threads"], i < 2 ? 1 : 2);
    EXPECT_EQ(probe["threads"], test["threads"]);
    EXPECT_EQ(test["bandwidth_gb_s"], probe["bandwidth_gb_s"]);
  }
  for (const size_t i : {1, 3}) {
    const auto& tg = report["tests"][i];
    EXPECT_NEAR(tg["decode_bandwidth_fraction"].get<double>(),
                tg["bytes_per_token"].get<double>() * tg["tok_s"].get<double>() /
                    (report["bandwidth"][i / 2]["bandwidth_gb_s"].get<double>() * 1e9),
                1e-9)
        << i;
  }
  EXPECT_EQ(report["threads"], 1);
  EXPECT_EQ(report["bandwidth_gb_s"], report["bandwidth"][0]["bandwidth_gb_s"]);
  EXPECT_EQ(report["prefill_tok_s"], report["tests"][0]["tok_s"]);
  EXPECT_EQ(report["decode_tok_s"], report["tests"][1]["tok_s"]);
  EXPECT_EQ(report["decode_bandwidth_fraction"], report["tests"][1]["decode_bandwidth_fraction"]);
}

// --pg times a prompt and its generation as one test: its t/s counts both over their time together, so
// a repetition takes about as long as the pp and tg tests of the same counts one after the other. Each
// pair has one part that dominates, so leaving either part out of the time or the count shows.
TEST(BenchCli, APromptThenGenTestCountsBothOverTheirTimeTogether) {
  const auto report = nlohmann::json::parse(
      run_command(std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                  " -p 256,4 -n 1,64 --pg 256,1 --pg 4,64 -r 3 -t 1 --bandwidth-bytes 67108864 --json"));
  ASSERT_EQ(report["tests"].size(), 6u);
  EXPECT_EQ(report["tests"][4]["test"], "pp256+tg1");
  EXPECT_EQ(report["tests"][5]["test"], "pp4+tg64");
  EXPECT_EQ(report["tests"][5]["n_prompt"], 4);
  EXPECT_EQ(report["tests"][5]["n_gen"], 64);
  EXPECT_FALSE(report["tests"][5].contains("bytes_per_token"));  // not a decode-only rate
  // The fastest repetition's seconds, from its rate and its token count.
  const auto fastest_seconds = [](const nlohmann::json& test, double tokens) {
    double rate = 0.0;
    for (const auto& sample : test["samples_tok_s"]) rate = std::max(rate, sample.get<double>());
    return tokens / rate;
  };
  for (const auto& [together, pp, tg] : {std::tuple{4, 0, 2}, std::tuple{5, 1, 3}}) {
    const auto& t = report["tests"];
    const double apart = fastest_seconds(t[pp], t[pp]["n_prompt"].get<double>()) +
                         fastest_seconds(t[tg], t[tg]["n_gen"].get<double>());
    const double tokens = t[together]["n_prompt"].get<double>() + t[together]["n_gen"].get<double>();
    const double ratio = fastest_seconds(t[together], tokens) / apart;
    EXPECT_GT(ratio, 0.67) << t[together]["test"];
    EXPECT_LT(ratio, 1.5) << t[together]["test"];
  }
}

// The headline prefill and decode rates are the pure pp and tg tests', never a pp+tg test's, and a
// pp+tg test is never interleaved with the tg tests (it would lose its prompt and add its state to theirs).
TEST(BenchCli, APromptThenGenTestIsNeitherHeadlineNorInterleaved) {
  const std::string command = std::string(TERN_BINARY) + " bench " + testing_support::tiny_pq2_model() +
                              " -r 1 -t 1 --bandwidth-bytes 67108864 --json ";
  const auto alone = nlohmann::json::parse(run_command(command + "-p 0 -n 0 --pg 8,2"));
  EXPECT_EQ(alone["prefill_tok_s"], 0.0);
  EXPECT_EQ(alone["decode_tok_s"], 0.0);
  EXPECT_GT(alone["tests"][0]["tok_s"].get<double>(), 0.0);
  const auto tg_only = nlohmann::json::parse(run_command(command + "-p 0 -n 2,3 --interleave"));
  const auto with_pg = nlohmann::json::parse(run_command(command + "-p 0 -n 2,3 --interleave --pg 8,2"));
  EXPECT_EQ(with_pg["max_kv_bytes"], tg_only["max_kv_bytes"]);
  EXPECT_GT(with_pg["tests"][2]["tok_s"].get<double>(), 0.0);
}

// An option that would change nothing the planned tests run is refused, not ignored.
TEST(BenchOptions, RefuseOptionsThatWouldChangeNothing) {
  BenchOptions base;
  base.model_path = testing_support::tiny_pq2_model();
  base.bandwidth_bytes = kMinBandwidthBytes;
  base.gen_tokens = {0};
  BenchOptions parallel = base, interleave = base, synthetic = base, empty_pg = base;
  parallel.parallel = {1, 4};
  interleave.interleave_decode = true;
  synthetic.gen_tokens = {2};
  synthetic.synthetic_depth = true;
  empty_pg.prompt_then_gen = {{.prompt_tokens = 8, .gen_tokens = 0}};
  const std::pair<const BenchOptions*, const char*> cases[] = {
      {&parallel, "--parallel applies to tg tests: give a positive -n"},
      {&interleave, "--interleave runs tg tests together: give a positive -n"},
      {&synthetic, "--synthetic-depth fills a depth: give a positive -d"},
      {&empty_pg, "--pg takes prompt and generation counts of 1 to"}};
  for (const auto& [options, message] : cases) expect_refused(*options, message);
}

TEST(BenchCli, MemoryBandwidthAloneNeedsNoModel) {
  const std::string out = run_command(std::string(TERN_BINARY) +
                                      " bench --memory-bandwidth -t 2 --bandwidth-bytes 67108864 --json");
  const auto report = nlohmann::json::parse(out);
  EXPECT_GT(report["bandwidth_median_gb_s"].get<double>(), 0.0);
  EXPECT_LE(report["bandwidth_median_gb_s"].get<double>(), report["bandwidth_gb_s"].get<double>());
  EXPECT_EQ(report["bandwidth_probe_bytes"], 67108864);
  EXPECT_EQ(report["threads"], 2);
  ASSERT_EQ(report["bandwidth"].size(), 1u);
  EXPECT_EQ(report["bandwidth"][0]["bandwidth_gb_s"], report["bandwidth_gb_s"]);
  const std::string both =
      run_command(std::string(TERN_BINARY) + " bench --memory-bandwidth -t 1,2 --bandwidth-bytes 67108864");
  EXPECT_NE(both.find(" median (1 thread, 0.06 GiB probe)\nstreaming read bandwidth: "), std::string::npos)
      << both;
  EXPECT_NE(both.find(" median (2 threads, 0.06 GiB probe)\n"), std::string::npos) << both;
}

TEST(BenchBytes, DecodeBytesCountTensorsStateAndKv) {
  const auto model =
      model::Model::open(testing_support::tiny_pq2_model(), {.pq2_form = model::Pq2Form::kRows});
  const model::Config& c = model->config();
  uint64_t tensors = 0;
  for (const gguf::TensorInfo& t : model->file().tensors())
    if (t.name != "token_embd.weight") tensors += t.nbytes;
  const auto gdn_layers = static_cast<uint64_t>(c.n_layer - c.n_attention_layers());
  const uint64_t state =
      8 * gdn_layers * static_cast<uint64_t>(c.gdn_n_v * c.gdn_k_head_dim * c.gdn_v_head_dim);
  ASSERT_NE(model->file().find_tensor("output.weight"), nullptr);
  EXPECT_EQ(decode_bytes_per_token(*model, 0, runtime::KvPrecision::kF16), tensors + state);
  const uint64_t kv_per_token =
      static_cast<uint64_t>(c.n_attention_layers() * c.n_head_kv * (c.head_dim + c.value_dim)) * 2;
  EXPECT_EQ(decode_bytes_per_token(*model, 10, runtime::KvPrecision::kF16),
            tensors + state + 10 * kv_per_token);
  EXPECT_EQ(decode_bytes_per_token(*model, 10, runtime::KvPrecision::kF32),
            tensors + state + 20 * kv_per_token);
  // Sequences decoding in one step share the tensors' read; each reads its own state and cache.
  EXPECT_EQ(decode_bytes_per_token(*model, 10, runtime::KvPrecision::kF16, 3),
            tensors / 3 + state + 10 * kv_per_token);
  // The PTQ1_0 file's matrices are smaller on disk; transcoded to PQ2_0 they read the PQ2_0 file's bytes.
  const auto ptq1 =
      model::Model::open(testing_support::tiny_ptq1_model(), {.ptq1_form = model::Ptq1Form::kPq2_0});
  EXPECT_LT(ptq1->file().file_size(), model->file().file_size());
  EXPECT_EQ(decode_bytes_per_token(*ptq1, 10, runtime::KvPrecision::kF16),
            decode_bytes_per_token(*model, 10, runtime::KvPrecision::kF16));
  // In trit panels they read whole panels of five codes a byte.
  const auto panels =
      model::Model::open(testing_support::tiny_ptq1_model(), {.ptq1_form = model::Ptq1Form::kTritPanels});
  uint64_t panel_tensors = 0;
  for (const gguf::TensorInfo& t : panels->file().tensors()) {
    if (t.name == "token_embd.weight") continue;
    panel_tensors += t.type == quant::TensorType::kPTQ1_0
                         ? *quant::matrix_bytes(quant::TensorType::kTritPanels, t.rows(), t.ne[0])
                         : t.nbytes;
  }
  EXPECT_EQ(decode_bytes_per_token(*panels, 0, runtime::KvPrecision::kF16), panel_tensors + state);
}

// Panels are read whole: a width of an odd block count adds 32 bytes a panel (quant/pq2_panels.h).
TEST(BenchBytes, PanelsCountTheirPadding) {
  const auto rows =
      model::Model::open(testing_support::tiny_pq2_model(), {.pq2_form = model::Pq2Form::kRows});
  const auto panels =
      model::Model::open(testing_support::tiny_pq2_model(), {.pq2_form = model::Pq2Form::kPanels});
  uint64_t padding = 0;
  for (const gguf::TensorInfo& t : rows->file().tensors()) {
    if (t.name != "token_embd.weight" && t.type == quant::TensorType::kPQ2_0)
      padding += quant::pq2_panels_bytes(t.rows(), t.ne[0]) - t.nbytes;
  }
  ASSERT_GT(padding, 0u);
  EXPECT_EQ(decode_bytes_per_token(*panels, 10, runtime::KvPrecision::kF16),
            decode_bytes_per_token(*rows, 10, runtime::KvPrecision::kF16) + padding);
}

}  // namespace
}  // namespace tern::tools
