// Every file a command reads whole is read by one reader that names the path and what is wrong with it.
// Before, a directory given to `perplexity -f` or `logits --tokens` ended in libstdc++'s "basic_filebuf::
// underflow error reading the file: Is a directory", naming no file, and a text that was not UTF-8 was
// "text to tokenize: invalid UTF-8", naming none either.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/apps/cli_test_model.h"

namespace tern::app {
namespace {

TEST(InputFilesCli, EveryCommandNamesADirectoryItWasGiven) {
  const std::string directory = temp_file("input_directory");
  std::filesystem::create_directories(directory);
  const std::string model = tiny_model_path();
  for (const std::string& args :
       {"perplexity -m " + model + " -f " + directory,
        "logits -m " + model + " --tokens " + directory + " --out " + temp_file("never.npy"),
        "tokenize " + model + " --jsonl " + directory, "render " + model + " " + directory}) {
    const TernExit run = run_tern(args, "input_err.txt");
    EXPECT_GT(run.code, 0) << args;
    EXPECT_EQ(run.err, "tern: error: " + directory + ": is a directory\n") << args;
  }
  std::filesystem::remove(directory);
}

TEST(InputFilesCli, PerplexityNamesATextThatIsNotUtf8) {
  const std::string text = temp_file("latin1.txt");
  std::ofstream(text, std::ios::binary) << "caf\xe9 au lait, caf\xe9 noir\n";
  const TernExit run = run_tern("perplexity -m " + tiny_model_path() + " -f " + text, "utf8_err.txt");
  EXPECT_GT(run.code, 0);
  EXPECT_NE(run.err.find(text + ": "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("invalid UTF-8 at byte 3"), std::string::npos) << run.err;
  std::filesystem::remove(text);
}

// Before, `tern tokenize MODEL` with neither printed the ids of "" and succeeded; an empty TEXT given is
// still a text.
TEST(InputFilesCli, TokenizeTakesATextOrAJsonlFileAndNotBoth) {
  const std::string model = tiny_model_path();
  const TernExit neither = run_tern("tokenize " + model, "tokenize_err.txt");
  EXPECT_GT(neither.code, 0);
  EXPECT_EQ(neither.err, "tern: error: tokenize: give either TEXT or --jsonl FILE\n");
  const TernExit both =
      run_tern("tokenize " + model + " '' --jsonl " + temp_file("lines.jsonl"), "tokenize_err.txt");
  EXPECT_GT(both.code, 0);
  EXPECT_EQ(both.err, "tern: error: tokenize: give either TEXT or --jsonl FILE, not both\n");
  EXPECT_EQ(run_tern("tokenize " + model + " ''", "tokenize_err.txt").code, 0);
}

}  // namespace
}  // namespace tern::app
