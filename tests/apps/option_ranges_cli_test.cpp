// Options outside what they can mean are refused at the command line, in one line, before the model
// loads. Before: `tern run -t 100000` started threads until the system refused one and ended in
// std::terminate; `tern serve --port 70000` listened on another port (70000 mod 65536). A context past
// the model's trained one is capped or warned about once the model has loaded.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>

#include "tests/apps/cli_test_model.h"
#include "tests/model/tiny_model.h"

namespace tern::app {
namespace {

bool says(const TernExit& run, const std::string& what) {
  return run.err.find(what) != std::string::npos;
}

TEST(OptionRangesCli, RunAndBenchRefuseMoreThreadsThanThePoolTakes) {
  for (const auto& [args, message] :
       {std::pair<std::string, std::string>{"run -m " + tiny_model_path() + " -t 100000 -p hi -n 2",
                                            "--threads: Value 100000 not in range 0 to 1024"},
        {"bench " + tiny_model_path() + " -t 2,1025 -p 8 -n 2 -r 1",
         "-t: '1025' in '2,1025' is outside 0..1024"}}) {
    const TernExit run = run_tern(args, "threads_err.txt");
    EXPECT_GT(run.code, 0) << args << ": " << run.err;
    EXPECT_TRUE(says(run, message)) << args << ": " << run.err;
    EXPECT_FALSE(says(run, "streaming read bandwidth")) << args << ": " << run.err;
  }
}

// Before, `--backend ref -t 4` and `--backend ref --pin` ran the one-threaded oracle without a word. Now
// each is refused, before the model loads: where the path names no model, the error is still the options'.
TEST(OptionRangesCli, TheRefBackendRefusesThreadsAndPinningBeforeTheModelLoads) {
  const std::string absent = ::testing::TempDir() + "/no_such_model.gguf";
  // serve checks that its model file exists as it parses: this one does, and is no GGUF.
  const std::string not_gguf = temp_file("not_a_model.gguf");
  std::ofstream(not_gguf) << "not a model";
  for (const auto& [args, message] :
       {std::pair<std::string, std::string>{"run -m " + absent + " --backend ref -t 4 -p hi -n 2",
                                            "-t 4: the ref backend computes on one thread (give -t 0 or 1)"},
        {"chat -m " + absent + " --backend ref -t 2", "-t 2: the ref backend computes on one thread"},
        {"serve " + not_gguf + " --backend ref --pin",
         "--pin: the ref backend computes on one thread, with no pool to pin"},
        {"bench " + absent + " --backend ref -t 3 -r 1", "-t 3: the ref backend computes on one thread"}}) {
    const TernExit run = run_tern(args, "ref_threads_err.txt", 30);
    EXPECT_GT(run.code, 0) << args << ": " << run.err;
    EXPECT_TRUE(says(run, message)) << args << ": " << run.err;
  }
}

// A mapped file's PQ2_0 matrices are its rows: before, `--mmap --pq2-form panels` decoded from rows
// without a word.
TEST(OptionRangesCli, MmapRefusesAPq2FormItWouldIgnore) {
  for (const std::string& args : {"run -m " + tiny_model_path() + " --mmap --pq2-form panels -p hi -n 2",
                                  "bench " + tiny_model_path() + " --pq2-form rows --mmap -r 1"}) {
    const TernExit run = run_tern(args, "mmap_form_err.txt", 30);
    EXPECT_GT(run.code, 0) << args << ": " << run.err;
    EXPECT_TRUE(says(run, "--mmap excludes --pq2-form")) << args << ": " << run.err;
  }
}

// A form names what the file's PTQ1_0 or PQ2_0 matrices become: before, one given for a file without
// them changed nothing without a word. A misspelt form is still named as one, and auto is always taken.
TEST(OptionRangesCli, AFormOptionNeedsTheFileToHoldItsMatrices) {
  const std::string pq2 = tiny_model_path();
  const std::string ptq1 = testing_support::tiny_ptq1_model();
  for (const auto& [args, message] :
       {std::pair<std::string, std::string>{"run -m " + pq2 + " --ptq1-form rows -p hi -n 2",
                                            "--ptq1-form rows: " + pq2 + " has no PTQ1_0 matrices"},
        {"bench " + pq2 + " --ptq1-form planes -r 1", "--ptq1-form planes: " + pq2 + " has no PTQ1_0"},
        {"run -m " + ptq1 + " --pq2-form rows -p hi -n 2", "--pq2-form rows: " + ptq1 + " has no PQ2_0"},
        {"run -m " + pq2 + " --ptq1-form columns -p hi -n 2", "--ptq1-form must be auto, panels"}}) {
    const TernExit run = run_tern(args, "form_err.txt", 30);
    EXPECT_GT(run.code, 0) << args << ": " << run.err;
    EXPECT_TRUE(says(run, message)) << args << ": " << run.err;
  }
  for (const std::string& args : {"run -m " + ptq1 + " --ptq1-form rows -p hi -n 2 --temp 0",
                                  "run -m " + pq2 + " --ptq1-form auto --pq2-form rows -p hi -n 2 --temp 0"})
    EXPECT_EQ(run_tern(args, "form_err.txt", 30).code, 0) << args;
}

// Before: `--timeout 1e300` overflowed every request's deadline into the past (each ended at once with no
// tokens), `--api-key ''` (an unset variable) served without a key, `--batch-tokens 0` was refused by the
// engine in its own terms, and `--checkpoint-interval` with the cache off was checked and never used.
TEST(OptionRangesCli, ServeRefusesOptionsPastWhatTheyCanMean) {
  for (const auto& [option, message] : {std::pair<std::string, std::string>{"--port 70000", "not in range"},
                                        {"--grace -1", "not in range"},
                                        {"--max-body 0", "not in range"},
                                        {"--batch-tokens 0", "not in range 1 to 16777216"},
                                        {"--timeout 1e300", "--timeout: Value 1e300 not in range"},
                                        {"--api-key ''", "--api-key: must not be empty"},
                                        {"--host ''", "--host: must not be empty"},
                                        {"--cache-mb 0 --checkpoint-interval 512",
                                         "--checkpoint-interval: --cache-mb 0 turns off the prefix cache"}}) {
    // Under a timeout: an option taken by mistake would leave the server listening, not failing.
    const TernExit run = run_tern("serve " + tiny_model_path() + " " + option, "serve_range_err.txt", 30);
    EXPECT_GT(run.code, 0) << option << ": " << run.err;
    EXPECT_NE(run.code, 124) << option << ": still serving after 30 s";
    EXPECT_TRUE(says(run, message)) << option << ": " << run.err;
  }
}

// A stray comma, a word or a count out of range in a count list is named as typed: before, CLI11's
// delimiter dropped an empty element, so `-d ,16` ran depth 16 alone, and a count past int64 was named as
// 9223372036854775807. The probe alone takes none of the tests' options.
TEST(OptionRangesCli, BenchRefusesAMalformedCountList) {
  for (const auto& [option, message] :
       {std::pair<std::string, std::string>{"-d ,16", "-d: '' in ',16' is not"},
        {"-p 8,abc", "-p: 'abc' in '8,abc' is not a whole number"},
        {"-n 16,", "-n: '' in '16,' is not"},
        {"--parallel 1.5", "--parallel: '1.5' is not a whole number"},
        {"--parallel 1,257", "--parallel: '257' in '1,257' is outside 1..256"},
        {"-t 99999999999999999999", "-t: '99999999999999999999' is outside 0..1024"},
        {"--pg 512", "--pg: '512' is not PP,TG (two counts)"},
        {"--pg 1,2,3", "--pg: '1,2,3' is not PP,TG (two counts)"},
        {"--pg 8,0", "--pg: '0' in '8,0' is outside 1..1099511627776"},
        {"--memory-bandwidth -p 8", " excludes --memory-bandwidth"},
        {"-r 0", "--repetitions: Value 0 not in range 1 to 2147483647"}}) {
    const TernExit run = run_tern("bench " + tiny_model_path() + " " + option, "count_list_err.txt");
    EXPECT_GT(run.code, 0) << option << ": " << run.err;
    EXPECT_TRUE(says(run, message)) << option << ": " << run.err;
    EXPECT_FALSE(says(run, "streaming read bandwidth")) << option << ": " << run.err;
  }
  // A leading '+', as strtoll and the other whole-number options take it.
  const TernExit plus = run_tern("bench " + tiny_model_path() + " -r 1 -p +8 -n 0 --bandwidth-bytes 67108864",
                                 "count_list_err.txt");
  EXPECT_EQ(plus.code, 0) << plus.err;
}

// A test, or a server's slots, whose state cannot fit in memory is refused in one line before the first
// token: before, `tern bench -d 99999999` ended in "std::bad_alloc" and `tern serve --parallel 64
// --ctx-size 4000000` was killed by the OOM killer while it zero-filled its KV.
TEST(OptionRangesCli, BenchAndServeRefuseStatePastTheMemoryAvailable) {
  const std::string memory = "GiB of KV cache and recurrent state needed, ";
  const TernExit bench = run_tern(
      "bench " + tiny_model_path() + " -p 8 -n 2 -d 1000000000000 --synthetic-depth -r 1", "deep_err.txt");
  EXPECT_GT(bench.code, 0) << bench.err;
  EXPECT_TRUE(says(bench, "pp8 @ d1000000000000: 1 sequence of 1000000000008 tokens (f16 KV): "))
      << bench.err;
  EXPECT_TRUE(says(bench, memory)) << bench.err;
  EXPECT_FALSE(says(bench, "streaming read bandwidth")) << "probed before the check: " << bench.err;

  const TernExit range =
      run_tern("bench " + tiny_model_path() + " -p 8 -n 2 -d 2199023255552", "deep_err.txt");
  EXPECT_GT(range.code, 0) << range.err;
  EXPECT_TRUE(says(range, "-d: '2199023255552' is outside 0..1099511627776")) << range.err;

  const TernExit serve =
      run_tern("serve " + tiny_model_path() + " --host 256.256.256.256 --parallel 256 --ctx-size 4194304",
               "serve_memory_err.txt", 60);
  EXPECT_GT(serve.code, 0) << serve.err;
  EXPECT_NE(serve.code, 124) << "still running after 60 s";
  EXPECT_TRUE(says(serve, "256 sequences of 4194304 tokens (f16 KV) and a 1024 MiB prefix cache: "))
      << serve.err;
  EXPECT_TRUE(says(serve, memory)) << serve.err;
}

// Whole numbers are decimal and within their type, and a real number is never NaN: CLI11 alone read "010"
// as 8 (octal), "0x50" as 80, a seed of -1 as 2^64 − 1 and a number past 64 bits as the largest one, and
// took a NaN timeout past its range check, all without a word.
TEST(OptionRangesCli, NumbersAreDecimalWithinTheirTypeAndNeverNaN) {
  const std::string text = temp_file("decimal.txt");
  std::ofstream(text) << "The quick brown fox jumps over the lazy dog, again and again and again.\n";
  const TernExit leading_zero =
      run_tern("perplexity -m " + tiny_model_path() + " -f " + text + " --ctx 010", "decimal_err.txt");
  EXPECT_EQ(leading_zero.code, 0) << leading_zero.err;
  EXPECT_TRUE(says(leading_zero, "windows of 10 every 10")) << leading_zero.err;

  const std::string run = "run -m " + tiny_model_path() + " -p hi -n 2 ";
  for (const auto& [args, message] :
       {std::pair<std::string, std::string>{run + "--seed -1",
                                            "--seed: '-1' is outside 0..18446744073709551615"},
        {run + "-c 99999999999999999999",
         "--ctx-size: '99999999999999999999' is outside -9223372036854775808..9223372036854775807"},
        {run + "--top-k 0x10", "--top-k: '0x10' is not a decimal whole number"},
        {"serve " + tiny_model_path() + " --port 0x50", "--port: '0x50' is not a decimal whole number"},
        {"serve " + tiny_model_path() + " --timeout nan", "--timeout: 'nan' is not a number"},
        {"synth --preset tiny -o " + temp_file("never.gguf") + " --seed 18446744073709551616",
         "--seed: '18446744073709551616' is outside 0..18446744073709551615"}}) {
    const TernExit refused = run_tern(args, "decimal_err.txt", 30);
    EXPECT_GT(refused.code, 0) << args << ": " << refused.err;
    EXPECT_NE(refused.code, 124) << args << ": still running after 30 s";
    EXPECT_TRUE(says(refused, message)) << args << ": " << refused.err;
  }
}

// A context past the model's trained one is capped to it, and the command says so: before, `tern run -c
// 99999999999` was capped without a word.
TEST(OptionRangesCli, RunCapsTheContextAtTheTrainedOneAndSaysSo) {
  const TernExit run =
      run_tern("run -m " + tiny_model_path() + " -c 99999999999 -p hi -n 2 --temp 0", "trained_ctx_err.txt");
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(says(run, "--ctx-size 99999999999 is past the model's trained context of ")) << run.err;
}

// The server keeps the context its operator sized past the trained one (a sequence's history may need
// it) and says so in its log. An address it cannot listen on then ends it, after the sizing is logged.
TEST(OptionRangesCli, ServeKeepsAContextPastTheTrainedOneAndWarns) {
  const TernExit run =
      run_tern("serve " + tiny_model_path() + " --host 256.256.256.256 --parallel 1 --ctx-size 8192",
               "serve_ctx_err.txt");
  EXPECT_GT(run.code, 0) << run.err;
  EXPECT_TRUE(says(run, "--ctx-size 8192 is past the model's trained context of ")) << run.err;
  EXPECT_TRUE(says(run, "sequences: 1 × 8192 tokens")) << run.err;
  EXPECT_TRUE(says(run, "cannot listen on 256.256.256.256")) << run.err;
}

}  // namespace
}  // namespace tern::app
