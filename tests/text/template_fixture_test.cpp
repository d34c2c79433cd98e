// Every real Qwen chat template against Python jinja2 as Hugging Face runs it: the fixtures hold the
// request and the bytes HF's render_jinja_template produced (tools/reference/make_template_fixtures.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/error.h"
#include "text/chat_template.h"

namespace tern::text {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(TERN_SOURCE_DIR) / "tests/fixtures/templates";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(ChatTemplateFixtures, RendersEveryCaseLikePythonJinja2) {
  size_t templates = 0;
  size_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtures)) {
    const auto dir = entry.path();
    const auto tokens = nlohmann::ordered_json::parse(read_file(dir / "special_tokens.json"));
    const ChatTemplate chat_template(read_file(dir / "template.jinja"),
                                     SpecialTokens{tokens["bos_token"], tokens["eos_token"]});
    std::ifstream cases(dir / "cases.jsonl");
    std::string line;
    size_t count = 0;
    size_t raising = 0;
    while (std::getline(cases, line)) {
      const auto fixture = nlohmann::ordered_json::parse(line);
      const std::string where = dir.filename().string() + " " + fixture["name"].get<std::string>();
      if (fixture.contains("expected")) {
        std::string rendered;
        EXPECT_NO_THROW(rendered = chat_template.render(fixture["request"])) << where;
        EXPECT_EQ(rendered, fixture["expected"].get<std::string>()) << where;
      } else {
        ++raising;
        try {
          chat_template.render(fixture["request"]);
          ADD_FAILURE() << where << ": expected " << fixture["error"] << ": " << fixture["message"];
        } catch (const Error& e) {
          // Python's TemplateError is the template's own raise_exception(): its text must come through.
          if (fixture["error"] == "TemplateError") {
            EXPECT_NE(std::string(e.what()).find(fixture["message"].get<std::string>()), std::string::npos)
                << where << ": " << e.what();
          }
        }
      }
      ++count;
    }
    EXPECT_GE(count, 50u) << dir;
    std::printf("[ fixture  ] %s: %zu cases (%zu raise)\n", dir.filename().c_str(), count, raising);
    total += count;
    ++templates;
  }
  EXPECT_GE(templates, 1u);
  std::printf("[ fixture  ] %zu templates, %zu cases\n", templates, total);
}

}  // namespace
}  // namespace tern::text
