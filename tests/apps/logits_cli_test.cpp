#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/npy.h"
#include "tests/apps/cli_test_model.h"

namespace tern::app {
namespace {

const std::string kFixture = std::string(TERN_SOURCE_DIR) + "/tests/fixtures/parity/tiny-pq2_0";

TEST(LogitsCli, ReproducesTheTransformersLogitsOfTheParityFixture) {
  const std::string out = temp_file("logits_tiny_pq2_0.npy");
  const std::string command = std::string(TERN_BINARY) + " logits --backend ref -m " + kFixture +
                              "/model.gguf --tokens " + kFixture + "/tokens.json --out " + out +
                              " 2> /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const NpyArray ours = read_npy(out);
  const NpyArray reference = read_npy(kFixture + "/logits.npy");
  ASSERT_EQ(ours.shape, reference.shape);
  float max_reference = 0.0f;
  float max_diff = 0.0f;
  for (size_t i = 0; i < reference.data.size(); ++i) {
    max_reference = std::max(max_reference, std::fabs(reference.data[i]));
    max_diff = std::max(max_diff, std::fabs(ours.data[i] - reference.data[i]));
  }
  EXPECT_LE(max_diff, 1e-4f * max_reference) << "max |reference| " << max_reference;

  // The same ids, whitespace-separated, give the same file.
  const auto tokens = nlohmann::json::parse(file_text(kFixture + "/tokens.json"))["tokens"];
  const std::string ids = temp_file("logits_ids.txt");
  {
    std::ofstream text(ids);
    for (const auto& id : tokens) text << id.get<int>() << (id == tokens.back() ? "\n" : " ");
  }
  const std::string again = temp_file("logits_again.npy");
  const std::string second = std::string(TERN_BINARY) + " logits --backend ref -m " + kFixture +
                             "/model.gguf --tokens " + ids + " --out " + again + " 2> /dev/null";
  ASSERT_EQ(std::system(second.c_str()), 0);
  EXPECT_EQ(read_npy(again).data, ours.data);
}

TEST(LogitsCli, RejectsABadTokenFile) {
  const std::string ids = temp_file("logits_bad_ids.txt");
  std::ofstream(ids) << "1 2 three";
  const std::string command = std::string(TERN_BINARY) + " logits --backend ref -m " + kFixture +
                              "/model.gguf --tokens " + ids + " --out " + temp_file("never.npy") +
                              " 2> /dev/null";
  EXPECT_NE(std::system(command.c_str()), 0);
}

// Logits past the trained context are written, as asked, and the command says where they start.
TEST(LogitsCli, WarnsOfPositionsPastTheTrainedContext) {
  const std::string model = temp_file("logits_ctx16.gguf");
  ASSERT_EQ(run_tern("synth --preset tiny --context 16 -o " + model, "logits_synth_err.txt").code, 0);
  const std::string ids = temp_file("logits_20_ids.txt");
  std::ofstream(ids) << "5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24\n";
  const std::string out = temp_file("logits_20.npy");
  const TernExit past =
      run_tern("logits -m " + model + " --tokens " + ids + " --out " + out, "logits_ctx_err.txt");
  EXPECT_EQ(past.code, 0) << past.err;
  EXPECT_NE(
      past.err.find("warning: 20 tokens run past the model's trained context of 16: positions from 16 on"),
      std::string::npos)
      << past.err;
  EXPECT_EQ(read_npy(out).shape[0], 20);

  std::ofstream(ids) << "5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n";
  const TernExit within =
      run_tern("logits -m " + model + " --tokens " + ids + " --out " + out, "logits_ctx_err.txt");
  EXPECT_EQ(within.code, 0) << within.err;
  EXPECT_EQ(within.err.find("warning"), std::string::npos) << within.err;
}

TEST(PerplexityCli, PrintsAFinitePerplexityWithAnError) {
  const std::string text = temp_file("perplexity_text.txt");
  {
    std::ofstream out(text);
    for (int i = 0; i < 12; ++i) out << "The quick brown fox jumps over the lazy dog, line " << i << ".\n";
  }
  const std::string result = temp_file("perplexity_out.txt");
  const std::string command = std::string(TERN_BINARY) + " perplexity -m " + tiny_model_path() + " -f " +
                              text + " --ctx 64 > " + result + " 2> /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string printed = file_text(result);
  double ppl = 0.0;
  double error = 0.0;
  ASSERT_EQ(std::sscanf(printed.c_str(), "PPL = %lf \xc2\xb1 %lf", &ppl, &error), 2) << printed;
  EXPECT_GT(ppl, 1.0);
  EXPECT_TRUE(std::isfinite(ppl));
  EXPECT_GT(error, 0.0);

  // A negative stride is an error naming the option, not the default in disguise.
  const std::string err = temp_file("perplexity_err.txt");
  EXPECT_NE(std::system((std::string(TERN_BINARY) + " perplexity -m " + tiny_model_path() + " -f " + text +
                         " --ctx 64 --stride -1 > /dev/null 2> " + err)
                            .c_str()),
            0);
  EXPECT_NE(file_text(err).find("--stride must be >= 0"), std::string::npos) << file_text(err);
}

}  // namespace
}  // namespace tern::app
