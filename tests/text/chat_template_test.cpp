// ChatTemplate's mapping of an OpenAI request onto template variables (the way HF's
// apply_chat_template passes them) and its refusals.
#include "text/chat_template.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace tern::text {
namespace {

using Json = nlohmann::ordered_json;

const char* kEcho =
    "{{ bos_token }}|{{ eos_token }}|{{ add_generation_prompt }}|{{ tools }}|{{ documents }}|{{ flag }}|"
    "{% for m in messages %}{{ m.role }}:{{ m.reasoning_content }}/{{ m.thinking }};{% endfor %}";

TEST(ChatTemplate, PassesRequestFieldsAsHfDoes) {
  const ChatTemplate chat_template(kEcho, SpecialTokens{"<s>", "</s>"});
  EXPECT_EQ(chat_template.render(Json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})")),
            "<s>|</s>|True|None|None||user:/;");
  EXPECT_EQ(chat_template.render(Json::parse(R"({"messages": [{"role": "assistant", "reasoning": "r"}],
              "add_generation_prompt": false, "tools": [], "chat_template_kwargs": {"flag": 1, "eos_token": "E"}})")),
            "<s>|E|False|[]|None|1|assistant:r/r;");
}

TEST(ChatTemplate, RefusesMediaPartsAndMalformedRequests) {
  const ChatTemplate chat_template(kEcho);
  const auto refuses = [&](const char* body) {
    try {
      chat_template.render(Json::parse(body));
      ADD_FAILURE() << body;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << body;
    }
  };
  refuses(
      R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})");
  refuses(
      R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"video": "v.mp4"}]}]})");
  refuses(R"({"messages": {"role": "user"}})");
  refuses(R"({"prompt": "x"})");
  refuses(R"({"messages": [], "add_generation_prompt": "yes"})");
  refuses(R"({"messages": [], "chat_template_kwargs": [1]})");
  refuses(R"({"messages": [{"role": "user", "content": 18446744073709551615}]})");
}

}  // namespace
}  // namespace tern::text
