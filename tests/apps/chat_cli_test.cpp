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

// `tern chat OPTIONS` on the tiny model with `input` written to its stdin; stdout discarded.
TernExit chat_from_pipe(const std::string& options, const std::string& input, const std::string& err_name) {
  const std::string err = temp_file(err_name);
  const std::string command =
      std::string(TERN_BINARY) + " chat -m " + tiny_model_path() + " " + options + " > /dev/null 2> " + err;
  FILE* pipe = popen(command.c_str(), "w");
  if (pipe == nullptr) return {};
  std::fputs(input.c_str(), pipe);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, file_text(err)};
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

// Before, chat ran the cpu backend on every thread whatever --backend and -t said.
TEST(ChatCli, RunsOnTheBackendAndThreadsAsked) {
  for (const auto& [options, says] :
       {std::pair<std::string, std::string>{"--backend ref", "(backend ref, 1 thread)"},
        {"-t 1", "(backend cpu, 1 thread)"},
        {"--backend cpu -t 2", "(backend cpu, 2 threads)"}}) {
    const TernExit chat = chat_from_pipe(options + " -n 2", "/exit\n", "chat_backend_err.txt");
    EXPECT_EQ(chat.code, 0) << options << ": " << chat.err;
    EXPECT_NE(chat.err.find(says), std::string::npos) << options << ": " << chat.err;
  }
}

TEST(ChatCli, EndsAtExitCommand) {
  const TernExit chat = chat_from_pipe("-n 2", "/exit\nnever answered\n", "chat_exit_err.txt");
  EXPECT_EQ(chat.code, 0);
  EXPECT_EQ(count(chat.err, " generated, "), 0u);
}

// A line that is not UTF-8 is not sent and the conversation goes on: before, the template's error ended the
// chat and its history with it.
TEST(ChatCli, KeepsTheConversationPastALineThatIsNotUtf8) {
  const TernExit chat =
      chat_from_pipe("-n 2 --temp 0", "hello there\ncaf\xe9\nand again\n", "chat_utf8_err.txt");
  const std::string& log = chat.err;
  EXPECT_EQ(chat.code, 0) << log;
  EXPECT_NE(log.find("tern: the line is not UTF-8 (at byte 3); not sent"), std::string::npos) << log;
  ASSERT_EQ(count(log, " generated, "), 2u) << log;
  // The second reply's prompt holds the first turn: its history was kept (a fresh one is the first's size).
  int first_fed = 0, second_fed = 0, first_reused = 0, second_reused = 0;
  const size_t first = log.rfind('(', log.find(" prompt tokens fed"));  // past the backend line
  const size_t second = log.find("(", log.find("not sent"));
  ASSERT_EQ(std::sscanf(log.c_str() + first, "(%d prompt tokens fed, %d reused", &first_fed, &first_reused),
            2)
      << log;
  ASSERT_EQ(
      std::sscanf(log.c_str() + second, "(%d prompt tokens fed, %d reused", &second_fed, &second_reused), 2)
      << log;
  EXPECT_GT(second_fed + second_reused, first_fed + first_reused + 4) << log;
}

// run's --system and --no-think only mean something with --chat; --stop '' would end every reply at once.
TEST(ChatCli, RunRefusesASystemMessageWithoutChatAndAnEmptyStop) {
  const std::string run = "run -m " + tiny_model_path() + " -p hi -n 2 ";
  const TernExit system = run_tern(run + "--system 'be brief'", "run_system_err.txt");
  EXPECT_GT(system.code, 0);
  EXPECT_NE(system.err.find("--system requires --chat"), std::string::npos) << system.err;
  const TernExit no_think = run_tern(run + "--no-think", "run_no_think_err.txt");
  EXPECT_GT(no_think.code, 0);
  EXPECT_NE(no_think.err.find("--no-think requires --chat"), std::string::npos) << no_think.err;
  const TernExit stop = run_tern(run + "--stop ''", "run_stop_err.txt");
  EXPECT_GT(stop.code, 0);
  EXPECT_NE(stop.err.find("--stop: must not be empty"), std::string::npos) << stop.err;
}

}  // namespace
}  // namespace tern::app
