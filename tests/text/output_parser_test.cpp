// Table tests of the streaming output parser: each case is fed whole, at every split into two
// pieces, and one byte at a time; the joined deltas must always be the same, so no tag or part of a
// tag can leak into content or reasoning wherever the stream is cut.
#include "text/output_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tern::text {
namespace {

struct Joined {
  std::string reasoning;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
  bool malformed = false;
};

void add(Joined& joined, const Delta& delta) {
  joined.reasoning += delta.reasoning;
  joined.content += delta.content;
  for (const ToolCall& call : delta.tool_calls) {
    EXPECT_EQ(call.index, joined.calls.size());
    EXPECT_EQ(call.id, "call_" + std::to_string(call.index));
    joined.calls.emplace_back(call.name, call.arguments);
  }
  joined.malformed = joined.malformed || delta.malformed_tool_call;
}

Joined run(const OutputParserConfig& config, const std::vector<std::string>& pieces) {
  OutputParser parser(config);
  Joined joined;
  for (const std::string& piece : pieces) add(joined, parser.push(piece));
  add(joined, parser.finish());
  return joined;
}

struct Case {
  const char* name;
  bool thinking_open;
  std::string text;
  std::string reasoning;
  std::string content;
  std::vector<std::pair<std::string, std::string>> calls;
  bool malformed = false;
};

const nlohmann::ordered_json kTools = nlohmann::ordered_json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "opts": {"type": "object"}}}}}])");

const std::vector<Case> kCases = {
    {"ReasoningOpenInPrompt", true, "Let me think.\n</think>\n\nParis.", "Let me think.\n", "Paris.", {}},
    {"ReasoningOpenedByModel", false, "<think>\nHmm.\n</think>\n\nAnswer", "Hmm.\n", "Answer", {}},
    {"PlainContentWithAngleBrackets",
     false,
     "a <b>bold</b> x<tool y</think>",
     "",
     "a <b>bold</b> x<tool y</think>",
     {}},
    {"ThinkTagAfterContentIsText", false, "Use <think> tags.", "", "Use <think> tags.", {}},
    {"NoReasoningYet", true, "still thinking <tool_call>", "still thinking <tool_call>", "", {}},
    {"XmlToolCall",
     false,
     "I'll "
     "check.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n123\n</"
     "parameter>\n<parameter=days>\n2\n"
     "</parameter>\n<parameter=opts>\n{\"a\": [1, \"é\"]}\n</parameter>\n</function>\n</tool_call>",
     "",
     "I'll check.\n\n",
     {{"get_weather", R"({"city":"123","days":2,"opts":{"a":[1,"é"]}})"}}},
    {"XmlMultilineValueAndNoParameters",
     false,
     "<tool_call>\n<function=note>\n<parameter=text>\nline 1\nline "
     "2\n</parameter>\n</function>\n</tool_call>\n"
     "<tool_call>\n<function=ping>\n</function>\n</tool_call>\n",
     "",
     "",
     {{"note", R"({"text":"line 1\nline 2"})"}, {"ping", "{}"}}},
    {"JsonToolCalls",
     false,
     "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x y\"}}\n</tool_call>\n<tool_call>\n"
     "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Rome\\\"}\"}\n</tool_call>",
     "",
     "",
     {{"search", R"({"q":"x y"})"}, {"get_weather", R"({"city":"Rome"})"}}},
    {"ReasoningThenToolCall",
     true,
     "Need the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
     "\"Paris\"}}\n"
     "</tool_call>",
     "Need the weather.\n",
     "",
     {{"get_weather", R"({"city":"Paris"})"}}},
    {"MalformedJsonIsContent",
     false,
     "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": }\n</tool_call>",
     "",
     "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": }\n</tool_call>",
     {},
     true},
    {"MalformedXmlIsContent",
     false,
     "ok <tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>",
     "",
     "ok <tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>",
     {},
     true},
    {"UnclosedToolCallIsContent",
     false,
     "x<tool_call>\n{\"name\": \"se",
     "",
     "x<tool_call>\n{\"name\": \"se",
     {},
     true},
    {"ContentAfterToolCall",
     false,
     "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n\nDone.",
     "",
     "\n\nDone.",
     {{"f", "{}"}}},
};

class OutputParserTable : public ::testing::TestWithParam<Case> {};

void expect_case(const Case& c, const Joined& got, const std::string& how) {
  EXPECT_EQ(got.reasoning, c.reasoning) << c.name << " " << how;
  EXPECT_EQ(got.content, c.content) << c.name << " " << how;
  EXPECT_EQ(got.calls, c.calls) << c.name << " " << how;
  EXPECT_EQ(got.malformed, c.malformed) << c.name << " " << how;
}

TEST_P(OutputParserTable, SameResultAtEverySplit) {
  const Case& c = GetParam();
  OutputParserConfig config;
  config.thinking_open_in_prompt = c.thinking_open;
  config.tools = kTools;
  expect_case(c, run(config, {c.text}), "whole");
  for (size_t split = 0; split <= c.text.size(); ++split)
    expect_case(c, run(config, {c.text.substr(0, split), c.text.substr(split)}),
                "split at " + std::to_string(split));
  std::vector<std::string> bytes;
  for (const char ch : c.text) bytes.emplace_back(1, ch);
  expect_case(c, run(config, bytes), "byte by byte");
}

INSTANTIATE_TEST_SUITE_P(Cases, OutputParserTable, ::testing::ValuesIn(kCases),
                         [](const auto& test_info) { return std::string(test_info.param.name); });

TEST(OutputParser, HoldsBackAPartialTagUntilItResolves) {
  OutputParser parser(OutputParserConfig{});
  EXPECT_EQ(parser.push("Hello <tool_").content, "Hello ");
  const Delta rest = parser.push("x>");
  EXPECT_EQ(rest.content, "<tool_x>");
  EXPECT_TRUE(parser.finish().empty());
}

// A request with no tools, or with tool_choice none, asked for no calls: before, a <tool_call> block in
// its reply still came back as tool_calls.
TEST(OutputParser, ACallBlockIsContentWhereNoCallsWereAskedFor) {
  OutputParserConfig config;
  config.max_tool_calls = 0;
  OutputParser parser(config);
  const std::string block = "<tool_call>\n<function=f>\n</function>\n</tool_call>";
  Delta delta = parser.push("Sure: " + block);
  const Delta end = parser.finish();
  EXPECT_TRUE(delta.tool_calls.empty());
  EXPECT_TRUE(end.tool_calls.empty());
  EXPECT_EQ(delta.content + end.content, "Sure: " + block);
}

// parallel_tool_calls false: the first call is the reply's only one; a second block is content.
TEST(OutputParser, OneCallWhereOneWasAskedFor) {
  OutputParserConfig config;
  config.max_tool_calls = 1;
  OutputParser parser(config);
  const std::string second = "<tool_call>\n<function=g>\n</function>\n</tool_call>";
  Delta delta = parser.push("<tool_call>\n<function=f>\n</function>\n</tool_call>\n" + second);
  const Delta end = parser.finish();
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].name, "f");
  EXPECT_TRUE(end.tool_calls.empty());
  EXPECT_EQ(delta.content + end.content, "\n" + second);
}

TEST(OutputParser, ReleasesReasoningAsItStreams) {
  OutputParserConfig config;
  config.thinking_open_in_prompt = true;
  OutputParser parser(config);
  EXPECT_EQ(parser.push("step one, ").reasoning, "step one, ");
  EXPECT_EQ(parser.push("two</thi").reasoning, "two");
  const Delta end = parser.push("nk>\n\nAnswer");
  EXPECT_EQ(end.reasoning, "");
  EXPECT_EQ(end.content, "Answer");
}

}  // namespace
}  // namespace tern::text
