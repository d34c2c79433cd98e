// The OpenAI-compatible API's requests as typed structs, parsed from JSON with precise errors: every
// refusal is an ApiError naming the field (`param`) and carries the HTTP status and OpenAI error type.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/sampler.h"

namespace tern::server {

using Json = nlohmann::ordered_json;

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, std::string message, std::string param = {}, std::string code = {})
      : std::runtime_error(message),
        status_(status),
        type_(std::move(type)),
        param_(std::move(param)),
        code_(std::move(code)) {}

  int status() const { return status_; }
  // {"error": {"message", "type", "param", "code"}}
  Json to_json() const;

 private:
  int status_;
  std::string type_;
  std::string param_;
  std::string code_;
};

// 400 invalid_request_error naming `param`.
[[noreturn]] void bad_request(const std::string& param, const std::string& message);
// body[name] if present and not null, a 400 naming it if not a boolean; `parent`, the object holding it,
// names it in the error (stream_options.include_usage).
std::optional<bool> get_bool(const Json& body, const char* name, const char* parent = nullptr);

// Server-side bounds a request must respect (tern serve options).
struct RequestLimits {
  int64_t max_tokens = 4096;  // most tokens one choice may generate
  int64_t max_n = 8;
  int64_t max_stop = 8;
  int64_t vocab_size = 0;  // logit_bias ids must be below it
};

struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kNamed } mode = Mode::kAuto;
  std::string name;  // kNamed
};

// Fields common to chat and text completions.
struct GenerationFields {
  std::string model;
  std::optional<int64_t> max_tokens;
  std::vector<std::string> stop;
  runtime::SamplingParams sampling;
  bool seeded = false;
  int top_logprobs = -1;  // -1: no logprobs
  int64_t n = 1;
  bool stream = false;
  bool include_usage = false;
};

struct ChatRequest {
  GenerationFields fields;
  Json body;  // messages, tools, chat_template_kwargs: what the chat template renders
  Json tools = Json::array();
  ToolChoice tool_choice;
  bool parallel_tool_calls = true;  // false: the reply's first call is its only one, the rest content
  bool enable_thinking = true;
  std::optional<int64_t> thinking_budget;
  // continue_final_message: the last message is the assistant's reply so far (its text content); the
  // prompt ends inside it and generation continues it.
  std::optional<std::string> continued_reply;
};

struct CompletionRequest {
  GenerationFields fields;
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;  // when given as token ids
  bool echo = false;
};

// Parse a body; throws ApiError (400) for malformed JSON, wrong types, out-of-range values and
// features tern does not implement (response_format json_object/json_schema, best_of, ...).
Json parse_body(const std::string& body);
ChatRequest parse_chat_request(const Json& body, const RequestLimits& limits);
// Only what the chat template renders (messages, tools and tool_choice, chat_template_kwargs,
// add_generation_prompt, continue_final_message), checked as parse_chat_request checks it; `fields`
// and `thinking_budget` are left at their defaults. `tern render` reads a request this way.
ChatRequest parse_chat_prompt(const Json& body);
CompletionRequest parse_completion_request(const Json& body, const RequestLimits& limits);

}  // namespace tern::server
