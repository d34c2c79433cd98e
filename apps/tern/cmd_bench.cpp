// tern bench: prompt-processing and token-generation speed on a model (markdown table or --json on
// stdout), with the measured streaming-read bandwidth; --memory-bandwidth alone measures only that.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
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
  // The comma lists as given (parse_counts): -p, -n, -d and --parallel.
  std::vector<std::string> prompt_tokens{"512"}, gen_tokens{"128"}, depths{"0"}, parallel{"1"};
  std::string backend = "cpu";
  std::string kv_type = "f16";
  bool json = false;
  bool memory_bandwidth = false;
  bool mmap = false;
  std::string ptq1_form = "auto";
  std::string pq2_form = "auto";
};

// The lists are split here, not by CLI11's delimiter, which drops an empty element: "-d ,16" would have
// run depth 16 alone. A count past int64 becomes INT64_MAX, for tools::run_bench's range check to name.
std::vector<int64_t> parse_counts(const std::vector<std::string>& lists, std::string_view option) {
  std::vector<int64_t> counts;
  for (const std::string& list : lists) {
    for (size_t begin = 0;;) {
      const size_t end = std::min(list.find(',', begin), list.size());
      const std::string_view item = std::string_view(list).substr(begin, end - begin);
      int64_t count = 0;
      const auto [last, error] = read_decimal(item, count);
      if (error == std::errc::result_out_of_range) count = item.front() == '-' ? INT64_MIN : INT64_MAX;
      if (item.empty() || (error != std::errc() && error != std::errc::result_out_of_range) ||
          last != item.data() + item.size()) {
        const std::string where = item == list ? "" : fmt::format(" in '{}'", list);
        fail(ErrorKind::kInput, "{}: '{}'{} is not a whole number", option, item, where);
      }
      counts.push_back(count);
      if (end == list.size()) break;
      begin = end + 1;
    }
  }
  return counts;
}

void bench(BenchArgs& args) {
  if (args.memory_bandwidth) {
    if (!args.options.model_path.empty()) fail(ErrorKind::kInput, "--memory-bandwidth takes no model");
    const kernels::cpu::ReadBandwidth read =
        tools::measure_bandwidth(args.options.threads, args.options.bandwidth_bytes);
    if (args.json) {
      fmt::print(
          "{{\"bandwidth_gb_s\": {:.3f}, \"bandwidth_median_gb_s\": {:.3f}, \"bandwidth_probe_bytes\": "
          "{}}}\n",
          read.best_gb_s, read.median_gb_s, read.bytes);
    } else {
      fmt::print("streaming read bandwidth: {:.2f} GB/s best pass, {:.2f} median ({:.2f} GiB probe)\n",
                 read.best_gb_s, read.median_gb_s,
                 static_cast<double>(read.bytes) / static_cast<double>(size_t{1} << 30));
    }
    return;
  }
  if (args.options.model_path.empty())
    fail(ErrorKind::kInput, "tern bench needs a MODEL (or --memory-bandwidth)");
  args.options.prompt_tokens = parse_counts(args.prompt_tokens, "-p");
  args.options.gen_tokens = parse_counts(args.gen_tokens, "-n");
  args.options.depths = parse_counts(args.depths, "-d");
  args.options.parallel = parse_counts(args.parallel, "--parallel");
  args.options.backend = runtime::parse_backend(args.backend);
  args.options.kv = runtime::parse_kv_precision(args.kv_type);
  if (args.mmap) args.options.load.placement = model::WeightPlacement::kMapped;
  args.options.load.ptq1_form = model::parse_ptq1_form(args.ptq1_form);
  args.options.load.pq2_form = model::parse_pq2_form(args.pq2_form);
  args.options.load.threads = args.options.threads;
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
  command->add_flag("--synthetic-depth", args->options.synthetic_depth,
                    "fill the depth with random KV and recurrent state instead of prefilling it");
  command->add_option("-r,--repetitions", args->options.repetitions, "repetitions of each test")
      ->capture_default_str();
  command->add_option("-t,--threads", args->options.threads, "threads (0: every hardware thread)")
      ->check(CLI::Range(0, ThreadPool::kMaxThreads))
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
  command->add_flag("--pin", args->options.pin_threads, "pin thread t to CPU t");
  command->add_flag("--read-only-matmuls", args->options.read_only_matmuls,
                    "ternary matmuls only read their weights (outputs meaningless): the decode ceiling a "
                    "kernel whose arithmetic cost nothing would reach");
  command->add_flag("--interleave", args->options.interleave_decode,
                    "run the tg tests together, one token of each in turn (their states held at once): "
                    "depths compared over the same moments of a shared host");
  command->add_flag("--mmap", args->mmap, "read the weights from the file mapping (see tern run --help)");
  BackendOptions::add_ptq1_form(*command, args->ptq1_form);
  BackendOptions::add_pq2_form(*command, args->pq2_form);
  command->add_flag("--json", args->json, "one JSON object instead of the table");
  command->add_flag("--memory-bandwidth", args->memory_bandwidth,
                    "measure only the streaming read bandwidth");
  command->callback([args] { bench(*args); });
}

}  // namespace tern::app
