#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "tests/apps/cli_test_model.h"

namespace tern::app {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ChatCli, RunsTwoTurnsAResetAndATurnFromAPipe) {
  const std::string out = temp_file("chat_out.txt");
  const std::string err = temp_file("chat_err.txt");
  const std::string command = std::string(TERN_BINARY) + " chat -m " + tiny_model_path() +
                              " -n 6 --temp 0 --system 'be brief' > " + out + " 2> " + err;
  FILE* pipe = popen(command.c_str(), "w");
  ASSERT_NE(pipe, nullptr);
  std::fputs("hello there\nand a second question\n/reset\nafter the reset\n", pipe);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << file_text(err);
  EXPECT_EQ(WEXITSTATUS(status), 0) << file_text(err);

  const std::string log = file_text(err);
  // One line of figures per reply: three replies, the history cleared once in between.
  EXPECT_EQ(count(log, " generated, "), 3u) << log;
  EXPECT_EQ(count(log, "(history cleared)"), 1u) << log;
  const size_t cleared = log.find("(history cleared)");
  // The first turn and the turn after /reset start from an empty sequence.
  EXPECT_NE(log.find(", 0 reused;"), std::string::npos);
  EXPECT_NE(log.find(", 0 reused;", cleared), std::string::npos) << log;
  // Each reply ends with a newline on stdout; the prompt opened a think block, so output is reasoning.
  const std::string shown = file_text(out);
  EXPECT_GE(std::count(shown.begin(), shown.end(), '\n'), 3) << shown;
}

TEST(ChatCli, EndsAtExitCommand) {
  const std::string err = temp_file("chat_exit_err.txt");
  const std::string command =
      std::string(TERN_BINARY) + " chat -m " + tiny_model_path() + " -n 2 > /dev/null 2> " + err;
  FILE* pipe = popen(command.c_str(), "w");
  ASSERT_NE(pipe, nullptr);
  std::fputs("/exit\nnever answered\n", pipe);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(count(file_text(err), " generated, "), 0u);
}

}  // namespace
}  // namespace tern::app
