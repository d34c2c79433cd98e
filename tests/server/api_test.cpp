// Request parsing: what a client asks is honoured or refused with a 400 naming the field, never dropped.
#include "server/api.h"

#include <gtest/gtest.h>

#include <string>

namespace tern::server {
namespace {

const RequestLimits kLimits{.max_tokens = 4096, .vocab_size = 1000};

// The refusal's `param`, or "accepted" where the body parses as a chat request.
std::string refusal(const std::string& body) {
  try {
    parse_chat_request(parse_body(body), kLimits);
    return "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << e.what();
    return e.to_json()["error"]["param"].is_null() ? "" : e.to_json()["error"]["param"].get<std::string>();
  }
}

std::string chat(const std::string& extra) {
  return R"({"model": "m", "messages": [{"role": "user", "content": "hi"}])" + extra + "}";
}

// Before: ~20,000 levels of '[' in a field the chat template reads overflowed the stack of the template
// value conversion, and the server died with every request it held; 1e400 was a 500.
TEST(ServerApi, ABodyTooDeepOrPastADoubleIsA400) {
  const std::string deep = std::string(20000, '[') + std::string(20000, ']');
  EXPECT_EQ(refusal(chat(R"(, "chat_template_kwargs": {"x": )" + deep + "}")), "");
  EXPECT_EQ(refusal(chat(R"(, "user": )" + std::string(65, '[') + std::string(65, ']'))), "");
  EXPECT_EQ(refusal(chat(R"(, "user": )" + std::string(60, '[') + std::string(60, ']'))), "accepted");
  EXPECT_EQ(refusal(chat(R"(, "temperature": 1e400)")), "");
}

// Peers' fields that would change the reply are refused unless they ask for what tern does anyway.
TEST(ServerApi, AFieldThatWouldChangeTheReplyIsHonouredOrRefused) {
  EXPECT_EQ(refusal(chat(R"(, "ignore_eos": true)")), "ignore_eos");
  EXPECT_EQ(refusal(chat(R"(, "ignore_eos": false)")), "accepted");
  EXPECT_EQ(refusal(chat(R"(, "repeat_penalty": 1.1, "repetition_penalty": 1.2)")), "repeat_penalty");
  EXPECT_EQ(refusal(chat(R"(, "n_predict": 0)")), "n_predict");
  EXPECT_EQ(refusal(chat(R"(, "stop_token_ids": [], "functions": [], "grammar": "")")), "accepted");
  // A field switched on by another is moot while that one is off (llama.cpp's clients send the defaults).
  EXPECT_EQ(
      refusal(chat(R"(, "dry_multiplier": 0, "dry_base": 1.75, "repeat_last_n": 64, "penalize_nl": true)")),
      "accepted");
  EXPECT_EQ(refusal(chat(R"(, "dry_multiplier": 0.8, "dry_base": 1.75)")), "dry_multiplier");
  EXPECT_EQ(refusal(chat(R"(, "repeat_penalty": 1.1, "repeat_last_n": 64)")), "repeat_last_n");
  EXPECT_EQ(refusal(chat(R"(, "xtc_threshold": 0.1)")), "accepted");
  EXPECT_EQ(refusal(chat(R"(, "xtc_probability": 0.5, "xtc_threshold": 0.1)")), "xtc_probability");
  EXPECT_EQ(refusal(chat(R"(, "typical_p": 1)")), "accepted");
  EXPECT_EQ(refusal(chat(R"(, "typical_p": 0.9)")), "typical_p");
  EXPECT_EQ(refusal(chat(R"(, "modalities": ["text"])")), "accepted");
  EXPECT_EQ(refusal(chat(R"(, "modalities": ["text", "audio"])")), "modalities");
  EXPECT_EQ(refusal(chat(R"(, "guided_json": {"type": "object"})")), "guided_json");
  EXPECT_EQ(refusal(chat(R"(, "functions": [{"name": "f"}])")), "functions");
  EXPECT_EQ(refusal(chat(R"(, "user": "u1", "metadata": {"k": "v"}, "store": false)")), "accepted");
  EXPECT_EQ(refusal(chat(R"(, "chat_template_kwargs": {"messages": []})")), "chat_template_kwargs.messages");
  EXPECT_EQ(refusal(chat(R"(, "chat_template_kwargs": {"enable_thinking": 1})")),
            "chat_template_kwargs.enable_thinking");
  EXPECT_EQ(refusal(chat(R"(, "stream": true, "stream_options": {"include_usage": "yes"})")),
            "stream_options.include_usage");
}

// llama.cpp's names for fields tern has are taken as those fields.
TEST(ServerApi, LlamaCppNamesAreAliases) {
  const ChatRequest request =
      parse_chat_request(parse_body(chat(R"(, "repeat_penalty": 1.3, "n_predict": 5)")), kLimits);
  EXPECT_FLOAT_EQ(request.fields.sampling.repetition_penalty, 1.3f);
  EXPECT_EQ(request.fields.max_tokens, 5);
  EXPECT_FALSE(parse_chat_request(parse_body(chat(R"(, "n_predict": -1)")), kLimits).fields.max_tokens);
  EXPECT_EQ(
      parse_chat_request(parse_body(chat(R"(, "n_predict": 5, "max_tokens": 7)")), kLimits).fields.max_tokens,
      7);
  EXPECT_FALSE(
      parse_chat_request(parse_body(chat(R"(, "parallel_tool_calls": false)")), kLimits).parallel_tool_calls);
}

// max_completion_tokens replaces max_tokens and wins where both are given; its limit names it.
TEST(ServerApi, MaxCompletionTokensWinsOverMaxTokens) {
  const ChatRequest both =
      parse_chat_request(parse_body(chat(R"(, "max_tokens": 8, "max_completion_tokens": 2)")), kLimits);
  EXPECT_EQ(both.fields.max_tokens, 2);
  EXPECT_EQ(refusal(chat(R"(, "max_tokens": 8, "max_completion_tokens": 5000)")), "max_completion_tokens");
}

// A past call's arguments as OpenAI sends them (the object's JSON text) reach the template as an object;
// before, the text was dropped from the prompt.
TEST(ServerApi, APastCallsArgumentsTextBecomesAnObject) {
  const std::string history = R"(, {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type":
      "function", "function": {"name": "f", "arguments": )";
  const auto with_arguments = [&](const std::string& arguments) {
    return R"({"model": "m", "messages": [{"role": "user", "content": "hi"})" + history + arguments +
           "}}]}]}";
  };
  const ChatRequest text = parse_chat_request(parse_body(with_arguments(R"("{\"x\": 1}")")), kLimits);
  const ChatRequest object = parse_chat_request(parse_body(with_arguments(R"({"x": 1})")), kLimits);
  EXPECT_EQ(text.body["messages"][1]["tool_calls"][0]["function"]["arguments"], Json({{"x", 1}}));
  EXPECT_EQ(text.body, object.body);
  // Blank text is no arguments; text that is no object (a model's malformed call sent back) stays text.
  const auto rendered = [&](const std::string& arguments) {
    return parse_chat_request(parse_body(with_arguments(arguments)), kLimits)
        .body["messages"][1]["tool_calls"][0]["function"]["arguments"];
  };
  EXPECT_EQ(rendered(R"("  ")"), Json::object());
  EXPECT_EQ(rendered(R"("{not json")"), "{not json");
  EXPECT_EQ(rendered(R"("[1]")"), "[1]");
  EXPECT_EQ(refusal(with_arguments("5")), "messages[1].tool_calls[0].function.arguments");
  EXPECT_EQ(
      refusal(R"({"model": "m", "messages": [{"role": "assistant", "content": null, "tool_calls": [5]}]})"),
      "messages[0].tool_calls[0]");
}

}  // namespace
}  // namespace tern::server
