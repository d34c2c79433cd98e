// Options outside what they can mean are refused at the command line, in one line, before the model
// loads. Before: `tern run -t 100000` started threads until the system refused one and ended in
// std::terminate; `tern serve --port 70000` listened on another port (70000 mod 65536). A context past
// the model's trained one is capped or warned about once the model has loaded.
#include <gtest/gtest.h>

#include <string>

#include "tests/apps/cli_test_model.h"

namespace tern::app {
namespace {

bool says(const TernExit& run, const std::string& what) {
  return run.err.find(what) != std::string::npos;
}

TEST(OptionRangesCli, RunAndBenchRefuseMoreThreadsThanThePoolTakes) {
  for (const std::string& args : {"run -m " + tiny_model_path() + " -t 100000 -p hi -n 2",
                                  "bench " + tiny_model_path() + " -t 1025 -p 8 -n 2 -r 1"}) {
    const TernExit run = run_tern(args, "threads_err.txt");
    EXPECT_GT(run.code, 0) << args << ": " << run.err;
    EXPECT_TRUE(says(run, "--threads: Value ")) << args << ": " << run.err;
    EXPECT_TRUE(says(run, "not in range 0 to 1024")) << run.err;
  }
}

TEST(OptionRangesCli, ServeRefusesAPortPastTheRangeANegativeGraceAndAnEmptyBodyLimit) {
  for (const std::string option : {"--port 70000", "--grace -1", "--max-body 0"}) {
    // Under a timeout: an option taken by mistake would leave the server listening, not failing.
    const TernExit run = run_tern("serve " + tiny_model_path() + " " + option, "serve_range_err.txt", 30);
    EXPECT_GT(run.code, 0) << option << ": " << run.err;
    EXPECT_NE(run.code, 124) << option << ": still serving after 30 s";
    EXPECT_TRUE(says(run, "not in range")) << option << ": " << run.err;
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
