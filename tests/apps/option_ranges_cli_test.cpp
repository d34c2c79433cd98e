// Options outside what they can mean are refused at the command line, in one line, before the model
// loads. Before: `tern run -t 100000` started threads until the system refused one and ended in
// std::terminate; `tern serve --port 70000` listened on another port (70000 mod 65536). A context past
// the model's trained one is capped or warned about once the model has loaded.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "tests/apps/cli_test_model.h"

namespace tern::app {
namespace {

TEST(OptionRangesCli, RunAndBenchRefuseMoreThreadsThanThePoolTakes) {
  const std::string err = temp_file("threads_err.txt");
  for (const std::string& command : {" run -m " + tiny_model_path() + " -t 100000 -p hi -n 2",
                                     " bench " + tiny_model_path() + " -t 1025 -p 8 -n 2 -r 1"}) {
    const int status = std::system((std::string(TERN_BINARY) + command + " > /dev/null 2> " + err).c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command << ": ended by a signal";
    EXPECT_NE(WEXITSTATUS(status), 0) << command;
    EXPECT_NE(file_text(err).find("--threads: Value "), std::string::npos)
        << command << ": " << file_text(err);
    EXPECT_NE(file_text(err).find("not in range 0 to 1024"), std::string::npos) << file_text(err);
  }
}

TEST(OptionRangesCli, ServeRefusesAPortPastTheRangeANegativeGraceAndAnEmptyBodyLimit) {
  const std::string err = temp_file("serve_range_err.txt");
  for (const std::string& option :
       {std::string("--port 70000"), std::string("--grace -1"), std::string("--max-body 0")}) {
    // Under a timeout: an option taken by mistake would leave the server listening, not failing.
    const std::string command = "timeout 30 " + std::string(TERN_BINARY) + " serve " + tiny_model_path() +
                                " " + option + " > /dev/null 2> " + err;
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << option;
    EXPECT_NE(WEXITSTATUS(status), 0) << option;
    EXPECT_NE(file_text(err).find("not in range"), std::string::npos) << option << ": " << file_text(err);
  }
}

// A context past the model's trained one is capped to it, and the command says so: before, `tern run -c
// 99999999999` was capped without a word.
TEST(OptionRangesCli, RunCapsTheContextAtTheTrainedOneAndSaysSo) {
  const std::string err = temp_file("trained_ctx_err.txt");
  const std::string command = std::string(TERN_BINARY) + " run -m " + tiny_model_path() +
                              " -c 99999999999 -p hi -n 2 --temp 0 > /dev/null 2> " + err;
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << file_text(err);
  EXPECT_NE(file_text(err).find("--ctx-size 99999999999 is past the model's trained context of "),
            std::string::npos)
      << file_text(err);
}

// The server keeps the context its operator sized past the trained one (a sequence's history may need
// it) and says so in its log. An address it cannot listen on then ends it, after the sizing is logged.
TEST(OptionRangesCli, ServeKeepsAContextPastTheTrainedOneAndWarns) {
  const std::string err = temp_file("serve_ctx_err.txt");
  const std::string command = std::string(TERN_BINARY) + " serve " + tiny_model_path() +
                              " --host 256.256.256.256 --parallel 1 --ctx-size 8192 > /dev/null 2> " + err;
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << file_text(err);
  EXPECT_NE(file_text(err).find("--ctx-size 8192 is past the model's trained context of "), std::string::npos)
      << file_text(err);
  EXPECT_NE(file_text(err).find("sequences: 1 × 8192 tokens"), std::string::npos) << file_text(err);
  EXPECT_NE(file_text(err).find("cannot listen on 256.256.256.256"), std::string::npos) << file_text(err);
}

}  // namespace
}  // namespace tern::app
