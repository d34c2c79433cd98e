// Splits generated text of the Qwen family into reasoning, content and tool calls (model-spec §7.4),
// incrementally: push() takes each piece of detokenized text as it arrives and returns what can be
// released; a tag split across pieces is held back until it is complete, so no part of a tag ever
// leaks into content. Tool calls come in two forms:
//   XML (Qwen3.5, Qwen3-Coder):
//   <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n</function>\n</tool_call> JSON
//   (Qwen2.5, Qwen3, QwQ):  <tool_call>\n{"name": NAME, "arguments": {...}}\n</tool_call>
// A tool call that cannot be parsed is released as content, with `malformed_tool_call` set; text is
// never dropped.
#pragma once

#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tern::text {

struct ToolCall {
  size_t index = 0;  // position among this response's tool calls
  std::string id;    // id_prefix + index
  std::string name;
  std::string arguments;  // a JSON object, as text
};

struct Delta {
  std::string reasoning;
  std::string content;
  std::vector<ToolCall> tool_calls;  // each call is released whole, when its closing tag arrives
  bool malformed_tool_call = false;

  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

struct OutputParserConfig {
  // The prompt ended inside an open think block (Qwen3.5's generation prompt `<think>\n`).
  bool thinking_open_in_prompt = false;
  // The request's `tools` (OpenAI form); XML parameter values are typed by their JSON-schema type.
  nlohmann::ordered_json tools;
  // How many <tool_call> blocks are calls; any after them are content. 0 for a request with no tools or
  // with tool_choice none, 1 for one with parallel_tool_calls false.
  size_t max_tool_calls = std::numeric_limits<size_t>::max();
  std::string id_prefix = "call_";
};

class OutputParser {
 public:
  explicit OutputParser(OutputParserConfig config);

  Delta push(std::string_view text);
  // End of generation: releases whatever is held (a partial tag is text after all; an unclosed
  // tool call is content with `malformed_tool_call`).
  Delta finish();

 private:
  enum class State { kReasoning, kContent, kToolCall };

  void process(Delta& delta, bool at_end);
  void emit_text(Delta& delta, std::string_view text);
  void close_tool_call(Delta& delta, std::string_view body);
  std::string parameter_schema_type(const std::string& function, const std::string& parameter) const;

  OutputParserConfig config_;
  State state_;
  std::string buffer_;                   // received, not yet released
  bool content_started_ = false;         // non-whitespace content was released
  bool strip_leading_newlines_ = false;  // right after <think> or </think>
  std::string held_whitespace_;          // whitespace after </tool_call>, released only if content follows
  size_t tool_call_count_ = 0;
};

}  // namespace tern::text
