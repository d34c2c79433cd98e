// `tern render MODEL REQUEST.json` prints exactly the bytes the model's own template renders.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/tiny_qwen35.h"

namespace tern::text {
namespace {

const std::filesystem::path kQwen35 =
    std::filesystem::path(TERN_SOURCE_DIR) / "tests/fixtures/templates/qwen3_5";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(RenderCli, PrintsTheTemplatesBytesExactly) {
  testing::TinyQwen35 model;
  model.make();
  model.set("tokenizer.chat_template", gguf::Value::string(read_file(kQwen35 / "template.jinja")));
  const testing::TempFile model_path_file("render.gguf");
  const std::string& model_path = model_path_file.path();
  model.write(model_path);

  std::ifstream cases(kQwen35 / "cases.jsonl");
  std::string line;
  int checked = 0;
  while (std::getline(cases, line) && checked < 3) {
    const auto fixture = nlohmann::ordered_json::parse(line);
    if (!fixture.contains("expected") || fixture["request"].dump().find("tools") == std::string::npos)
      continue;
    const testing::TempFile request_path_file("request.json");
    const std::string& request_path = request_path_file.path();
    const testing::TempFile out_path_file("prompt.txt");
    const std::string& out_path = out_path_file.path();
    write_file(request_path, fixture["request"].dump());
    const std::string cmd =
        std::string(TERN_BINARY) + " render " + model_path + " " + request_path + " > " + out_path;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(read_file(out_path), fixture["expected"].get<std::string>()) << fixture["name"];
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(RenderCli, FailsWithOneLineForATemplateError) {
  testing::TinyQwen35 model;
  model.make();
  model.set("tokenizer.chat_template", gguf::Value::string(read_file(kQwen35 / "template.jinja")));
  const testing::TempFile model_path_file("render_error.gguf");
  const std::string& model_path = model_path_file.path();
  model.write(model_path);
  const testing::TempFile request_path_file("empty_request.json");
  const std::string& request_path = request_path_file.path();
  write_file(request_path, R"({"messages": []})");
  const testing::TempFile err_path_file("stderr.txt");
  const std::string& err_path = err_path_file.path();
  const std::string cmd =
      std::string(TERN_BINARY) + " render " + model_path + " " + request_path + " 2> " + err_path;
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_NE(read_file(err_path).find("No messages provided."), std::string::npos);
}

}  // namespace
}  // namespace tern::text
