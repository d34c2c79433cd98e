// tern bench: prompt-processing and token-generation speed on a model (markdown table or --json on
// stdout), with the measured streaming-read bandwidth; --memory-bandwidth alone measures only that.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <ranges>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "apps/tern/backend_options.h"
#include "apps/tern/commands.h"
#include "apps/tern/option_checks.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "tools/bench.h"

namespace tern::app {
namespace {

struct BenchArgs {
  tools::BenchOptions options;
  // The comma lists as given (parse_counts): -p, -n, -d, --parallel, -t and each --pg.
  std::vector<std::string> prompt_tokens{"512"}, gen_tokens{"128"}, depths{"0"}, parallel{"1"}, threads{"0"},
      prompt_then_gen;
  std::string backend = "cpu";
  std::string kv_type = "f16";
  bool json = false;
  bool memory_bandwidth = false;
  bool mmap = false;
  std::string ptq1_form = "auto";
  std::string pq2_form = "auto";
};

// The lists are split here, not by CLI11's delimiter, which drops an empty element: "-d ,16" would have
// run depth 16 alone. Each count is named as typed where it is outside [least, most].
std::vector<int64_t> parse_counts(const std::vector<std::string>& lists, std::string_view option,
                                  int64_t least, int64_t most) {
  std::vector<int64_t> counts;
  for (const std::string& list : lists) {
    for (size_t begin = 0;;) {
      const size_t end = std::min(list.find(',', begin), list.size());
      const std::string_view item = std::string_view(list).substr(begin, end - begin);
      const std::string where = item == list ? "" : fmt::format(" in '{}'", list);
      int64_t count = 0;
      const auto [last, error] = read_decimal(item, count);
      if (item.empty() || (error != std::errc() && error != std::errc::result_out_of_range) ||
          last != item.data() + item.size()) {
        fail(ErrorKind::kInput, "{}: '{}'{} is not a whole number", option, item, where);
      }
      if (error == std::errc::result_out_of_range || count < least || count > most)
        fail(ErrorKind::kInput, "{}: '{}'{} is outside {}..{}", option, item, where, least, most);
      counts.push_back(count);
      if (end == list.size()) break;
      begin = end + 1;
    }
  }
  return counts;
}

// Each --pg is one "PP,TG" pair.
std::vector<tools::PromptThenGen> parse_prompt_then_gen(const std::vector<std::string>& pairs) {
  std::vector<tools::PromptThenGen> tests;
  for (const std::string& pair : pairs) {
    const std::vector<int64_t> counts = parse_counts({pair}, "--pg", 1, tools::kMaxTestTokens);
    if (counts.size() != 2) fail(ErrorKind::kInput, "--pg: '{}' is not PP,TG (two counts)", pair);
    tests.push_back({.prompt_tokens = counts[0], .gen_tokens = counts[1]});
  }
  return tests;
}

std::vector<int> parse_thread_counts(const std::vector<std::string>& lists) {
  std::vector<int> threads;
  for (const int64_t count : parse_counts(lists, "-t", 0, ThreadPool::kMaxThreads))
    threads.push_back(static_cast<int>(count));
  return threads;
}

void print_bandwidth(const std::vector<int>& threads, size_t bytes, bool json) {
  const tools::BandwidthProbes probes = tools::measure_bandwidths(threads, bytes);
  if (json) {
    fmt::print("{}\n", tools::bandwidth_json(probes.by_threads, probes.bytes).dump(2));
    return;
  }
  for (const tools::ThreadsBandwidth& probe : probes.by_threads)
    fmt::print("streaming read bandwidth: {}\n", tools::describe_probe(probe, probes.bytes));
}

void bench(BenchArgs& args) {
  const std::vector<int> threads = parse_thread_counts(args.threads);
  if (args.memory_bandwidth) {
    if (!args.options.model_path.empty()) fail(ErrorKind::kInput, "--memory-bandwidth takes no model");
    print_bandwidth(threads, args.options.bandwidth_bytes, args.json);
    return;
  }
  if (args.options.model_path.empty())
    fail(ErrorKind::kInput, "tern bench needs a MODEL (or --memory-bandwidth)");
  args.options.prompt_tokens = parse_counts(args.prompt_tokens, "-p", 0, tools::kMaxTestTokens);
  args.options.gen_tokens = parse_counts(args.gen_tokens, "-n", 0, tools::kMaxTestTokens);
  args.options.depths = parse_counts(args.depths, "-d", 0, tools::kMaxTestTokens);
  args.options.parallel = parse_counts(args.parallel, "--parallel", 1, tools::kMaxParallel);
  args.options.prompt_then_gen = parse_prompt_then_gen(args.prompt_then_gen);
  args.options.threads = threads;
  args.options.backend = runtime::parse_backend(args.backend);
  args.options.kv = runtime::parse_kv_precision(args.kv_type);
  if (args.mmap) args.options.load.placement = model::WeightPlacement::kMapped;
  BackendOptions::check_forms_apply(args.ptq1_form, args.pq2_form, args.options.model_path);
  args.options.load.ptq1_form = model::parse_ptq1_form(args.ptq1_form);
  args.options.load.pq2_form = model::parse_pq2_form(args.pq2_form);
  // The load re-packs on as many threads as the largest test uses.
  args.options.load.threads = std::ranges::max(threads, {}, ThreadPool::resolve);
  const tools::BenchReport report = tools::run_bench(args.options);
  if (args.json) {
    fmt::print("{}\n", tools::bench_json(report).dump(2));
  } else {
    fmt::print("{}", tools::bench_markdown(report));
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* command =
      app.add_subcommand("bench", "measure prompt and generation speed against memory bandwidth");
  command->add_option("model", args->options.model_path, "GGUF model");
  command->add_option("-p,--n-prompt", args->prompt_tokens, "prompt-processing test sizes (comma list)")
      ->type_name("INT[,INT...]")
      ->capture_default_str();
  command->add_option("-n,--n-gen", args->gen_tokens, "token-generation test sizes (comma list)")
      ->type_name("INT[,INT...]")
      ->capture_default_str();
  command->add_option("-d,--depth", args->depths, "tokens already in the context (comma list)")
      ->type_name("INT[,INT...]")
      ->capture_default_str();
  command
      ->add_option(
          "--parallel", args->parallel,
          "sequences each tg test decodes in lockstep, one token of each a step, as a server batches "
          "its decodes (comma list; t/s counts every sequence's tokens)")
      ->type_name("INT[,INT...]")
      ->capture_default_str();
  command
      ->add_option("--pg", args->prompt_then_gen,
                   "a prompt of PP tokens then TG generated ones, timed together (t/s: both counts over the "
                   "whole time); repeatable")
      ->type_name("PP,TG")
      ->allow_extra_args(false);
  command->add_flag("--synthetic-depth", args->options.synthetic_depth,
                    "fill the depth with random KV and recurrent state instead of prefilling it");
  command->add_option("-r,--repetitions", args->options.repetitions, "repetitions of each test")
      ->check(CLI::Range(1, std::numeric_limits<int>::max()))
      ->capture_default_str();
  command
      ->add_option("-t,--threads", args->threads,
                   "threads (0: every allowed CPU; comma list: every test on each, against a bandwidth "
                   "probe on as many)")
      ->type_name("INT[,INT...]")
      ->capture_default_str();
  command->add_option("--backend", args->backend, "cpu or ref")->capture_default_str();
  command->add_option("--kv-type", args->kv_type, "KV cache precision: f16, f32 or q8")
      ->capture_default_str();
  command
      ->add_option("--bandwidth-bytes", args->options.bandwidth_bytes,
                   "buffer the bandwidth probe streams (at least 64 MiB; many times the last-level cache to "
                   "measure memory), 0: 1 GiB or 16 times the last-level cache, whichever is larger, at most "
                   "a quarter of memory")
      ->capture_default_str();
  command->add_flag("--pin", args->options.pin_threads,
                    "pin thread t to the t-th CPU the process may run on");
  command->add_flag("--read-only-matmuls", args->options.read_only_matmuls,
                    "ternary matmuls only read their weights (outputs meaningless): the decode ceiling a "
                    "kernel whose arithmetic cost nothing would reach");
  command->add_flag("--interleave", args->options.interleave_decode,
                    "run the tg tests together, one token of each in turn (their states held at once): "
                    "depths compared over the same moments of a shared host");
  CLI::Option* mmap =
      command->add_flag("--mmap", args->mmap, "read the weights from the file mapping (see tern run --help)");
  BackendOptions::add_ptq1_form(*command, args->ptq1_form);
  BackendOptions::add_pq2_form(*command, args->pq2_form, mmap);
  command->add_flag("--json", args->json, "one JSON object instead of the table");
  CLI::Option* memory_bandwidth = command->add_flag(
      "--memory-bandwidth", args->memory_bandwidth,
      "measure only the streaming read bandwidth (on each -t; takes only --bandwidth-bytes and --json)");
  // The probe alone runs no test: an option of the tests given with it is a mistake, not a no-op.
  for (CLI::Option* option : command->get_options()) {
    if (option != memory_bandwidth && option->nonpositional() && !option->check_name("--threads") &&
        !option->check_name("--bandwidth-bytes") && !option->check_name("--json") &&
        !option->check_name("--help"))
      memory_bandwidth->excludes(option);
  }
  command->callback([args] { bench(*args); });
}

}  // namespace tern::app
