// `tern render MODEL REQUEST.json` prints exactly the bytes the model's own template renders.
#include <gtest/gtest.h>

#include <algorithm>
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

class RenderCliRequest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::TinyQwen35 model;
    model.make();
    model.set("tokenizer.chat_template", gguf::Value::string(read_file(kQwen35 / "template.jinja")));
    model.write(model_file_.path());
  }

  // `tern render` of `request`: its exit status, stdout and stderr.
  struct Rendered {
    int status = -1;
    std::string out, err;
  };
  Rendered render(const std::string& request) const {
    const testing::TempFile request_file("render_request.json"), out_file("render_out.txt"),
        err_file("render_err.txt");
    write_file(request_file.path(), request);
    const std::string cmd = std::string(TERN_BINARY) + " render " + model_file_.path() + " " +
                            request_file.path() + " > " + out_file.path() + " 2> " + err_file.path();
    const int status = std::system(cmd.c_str());
    return {status, read_file(out_file.path()), read_file(err_file.path())};
  }

 private:
  testing::TempFile model_file_{"render_request.gguf"};
};

TEST_F(RenderCliRequest, FailsWithOneLineForATemplateError) {
  const Rendered r = render(R"({"messages": [{"role": "user", "content": "hi"},
                                             {"role": "system", "content": "late"}]})");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("System message must be at the beginning."), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The request is read as the server reads it: before, `tern render` passed any JSON to the template, so a
// number for a message's content rendered as nothing, and tools the server leaves out for tool_choice
// "none" were rendered.
TEST_F(RenderCliRequest, RefusesAndRendersAsTheServerDoes) {
  const Rendered number = render(R"({"messages": [{"role": "user", "content": 5}]})");
  EXPECT_NE(number.status, 0);
  EXPECT_NE(number.err.find("'messages[0].content' must be a string or an array of content parts"),
            std::string::npos)
      << number.err;
  EXPECT_NE(render(R"({"messages": []})").err.find("'messages' must not be empty"), std::string::npos);

  const std::string messages = R"("messages": [{"role": "user", "content": "What time is it?"}])";
  const std::string tools =
      R"("tools": [{"type": "function", "function": {"name": "clock", "parameters": {"type": "object"}}}])";
  const Rendered plain = render("{" + messages + "}");
  const Rendered with_tools = render("{" + messages + ", " + tools + "}");
  const Rendered tools_off = render("{" + messages + ", " + tools + R"(, "tool_choice": "none"})");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(with_tools.out.find("clock"), std::string::npos) << with_tools.out;
  EXPECT_EQ(tools_off.out, plain.out);

  // continue_final_message: the prompt ends inside the reply, without the template's end of turn.
  const Rendered continued = render(R"({"messages": [{"role": "user", "content": "What time is it?"},
                                                     {"role": "assistant", "content": "It is ten o'cl"}],
                                        "continue_final_message": true, "add_generation_prompt": false})");
  ASSERT_EQ(continued.status, 0) << continued.err;
  EXPECT_TRUE(continued.out.ends_with("It is ten o'cl")) << continued.out;
}

}  // namespace
}  // namespace tern::text
