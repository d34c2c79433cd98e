#include "server/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

namespace tern::server {

Json ApiError::to_json() const {
  Json error = {{"message", what()}, {"type", type_}};
  error["param"] = param_.empty() ? Json(nullptr) : Json(param_);
  error["code"] = code_.empty() ? Json(nullptr) : Json(code_);
  return Json{{"error", error}};
}

void bad_request(const std::string& param, const std::string& message) {
  throw ApiError(400, "invalid_request_error", message, param);
}

namespace {

// Deeper than any request needs (a tool's JSON schema nests a few levels): the chat template's values are
// converted level by level, so a body nested tens of thousands deep would overflow the stack.
constexpr int kMaxBodyDepth = 64;

// `text` as JSON nested at most kMaxBodyDepth deep; a 400 naming `param` (`what` in words) otherwise.
Json parse_json(const std::string& text, const std::string& param, const std::string& what) {
  try {
    return Json::parse(text, [&](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxBodyDepth)
        bad_request(param, fmt::format("{} nests deeper than {} levels", what, kMaxBodyDepth));
      return true;
    });
  } catch (const Json::exception& e) {  // a syntax error, or a number past a double (1e400)
    bad_request(param, fmt::format("{} is not valid JSON: {}", what, e.what()));
  }
}

const char* type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "a number";
  }
}

[[noreturn]] void wrong_type(const std::string& param, const char* expected, const Json& value) {
  bad_request(param, fmt::format("'{}' must be {}, not {}", param, expected, type_name(value)));
}

// The field if present and not null.
const Json* field(const Json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> get_number(const Json& body, const char* name, double lo, double hi) {
  const Json* v = field(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(name, "a number", *v);
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi))
    bad_request(name, fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, x));
  return x;
}

std::optional<int64_t> get_int(const Json& body, const char* name, int64_t lo, int64_t hi) {
  const Json* v = field(body, name);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) wrong_type(name, "an integer", *v);
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
    bad_request(name, fmt::format("'{}' must be at most {}", name, hi));
  }
  const auto x = v->get<int64_t>();
  if (x < lo || x > hi)
    bad_request(name, fmt::format("'{}' must be between {} and {}, got {}", name, lo, hi, x));
  return x;
}

void parse_stop(const Json& body, const RequestLimits& limits, std::vector<std::string>& stop) {
  const Json* v = field(body, "stop");
  if (!v) return;
  if (v->is_string()) {
    stop.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (static_cast<int64_t>(v->size()) > limits.max_stop) {
      bad_request("stop", fmt::format("'stop' may hold at most {} strings", limits.max_stop));
    }
    for (const Json& s : *v) {
      if (!s.is_string()) wrong_type("stop", "a string or an array of strings", s);
      stop.push_back(s.get<std::string>());
    }
  } else {
    wrong_type("stop", "a string or an array of strings", *v);
  }
  for (const std::string& s : stop) {
    if (s.empty()) bad_request("stop", "'stop' strings must not be empty");
  }
}

// Fields of the OpenAI API and of peers (vLLM, llama.cpp) that would change the reply and that tern does
// not implement. Each is refused, not ignored, unless its value asks for what tern does anyway (null, "",
// [] and {} always do) or every field that switches it on is off. Fields that cannot change the reply
// (user, metadata, store...) are not here.
struct Unimplemented {
  const char* name;
  std::vector<Json> harmless = {};
  std::vector<std::pair<const char*, Json>> switched_on_by = {};  // each with its off value
};

const std::vector<Unimplemented>& unimplemented_fields() {
  static const std::vector<std::pair<const char*, Json>> penalties = {
      {"repetition_penalty", 1}, {"repeat_penalty", 1}, {"presence_penalty", 0}, {"frequency_penalty", 0}};
  static const std::vector<Unimplemented> fields = {
      {"functions"},  // the deprecated form of tools
      {"function_call", {"none", "auto"}},
      {"repeat_last_n", {}, penalties},  // llama.cpp's: the penalties' window
      {"penalize_nl", {false}, penalties},
      {"n_probs", {0}},
      {"grammar"},
      {"json_schema"},
      {"samplers"},  // an order: tern takes top-k, then min-p and top-p at the temperature
      {"typical_p", {1}},
      {"tfs_z", {1}},
      {"top_n_sigma", {-1}},
      {"min_keep", {0}},
      {"dynatemp_range", {0}},
      {"dynatemp_exponent", {}, {{"dynatemp_range", 0}}},
      {"mirostat", {0}},
      {"mirostat_tau", {}, {{"mirostat", 0}}},
      {"mirostat_eta", {}, {{"mirostat", 0}}},
      {"dry_multiplier", {0}},
      {"dry_base", {}, {{"dry_multiplier", 0}}},
      {"dry_allowed_length", {}, {{"dry_multiplier", 0}}},
      {"dry_penalty_last_n", {}, {{"dry_multiplier", 0}}},
      {"dry_sequence_breakers", {}, {{"dry_multiplier", 0}}},
      {"xtc_probability", {0}},
      {"xtc_threshold", {}, {{"xtc_probability", 0}}},
      {"ignore_eos", {false}},  // vLLM's
      {"min_tokens", {0}},
      {"stop_token_ids"},
      {"bad_words"},
      {"allowed_token_ids"},
      {"truncate_prompt_tokens"},
      {"include_stop_str_in_output", {false}},
      {"skip_special_tokens", {true}},
      {"spaces_between_special_tokens", {true}},
      {"use_beam_search", {false}},
      {"length_penalty", {1}},
      {"prompt_logprobs"},
      {"guided_json"},
      {"guided_regex"},
      {"guided_choice"},
      {"guided_grammar"},
      {"structured_outputs"},
      {"chat_template"},
      {"reasoning_effort"},
      {"modalities", {Json::array({"text"})}},
      {"audio"},
      {"web_search_options"},
  };
  return fields;
}

bool empty_value(const Json& v) {
  return v.is_string() ? v.get_ref<const std::string&>().empty() : v.empty();  // empty(): null, [] or {}
}

void parse_unsupported(const Json& body) {
  for (const Unimplemented& f : unimplemented_fields()) {
    const Json* v = field(body, f.name);
    if (!v || empty_value(*v) || std::ranges::find(f.harmless, *v) != f.harmless.end()) continue;
    const bool switched_on =
        f.switched_on_by.empty() || std::ranges::any_of(f.switched_on_by, [&](const auto& s) {
          const Json* on = field(body, s.first);
          return on && *on != s.second;
        });
    if (switched_on) bad_request(f.name, fmt::format("'{}' is not supported by this server", f.name));
  }
  if (const Json* v = field(body, "response_format")) {
    if (!v->is_object()) wrong_type("response_format", "an object", *v);
    const Json* type = field(*v, "type");
    if (!type || !type->is_string())
      bad_request("response_format.type", "'response_format.type' must be a string");
    const auto name = type->get<std::string>();
    if (name != "text") {
      bad_request(
          "response_format",
          fmt::format("response_format '{}' is not supported: tern has no constrained decoding yet", name));
    }
  }
  if (const Json* v = field(body, "best_of"); v && !(v->is_number_integer() && v->get<int64_t>() == 1)) {
    bad_request("best_of", "'best_of' other than 1 is not supported");
  }
  if (const Json* v = field(body, "suffix")) {
    (void)v;
    bad_request("suffix", "'suffix' is not supported");
  }
}

// {"token id": bias}, bias in [-100, 100] (OpenAI); ids must be in the model's vocabulary.
void parse_logit_bias(const Json& body, const RequestLimits& limits, runtime::SamplingParams& s) {
  const Json* v = field(body, "logit_bias");
  if (!v) return;
  if (!v->is_object()) wrong_type("logit_bias", "an object", *v);
  for (auto entry = v->begin(); entry != v->end(); ++entry) {
    const std::string& key = entry.key();
    const Json& bias = entry.value();
    int64_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc{} || end != key.data() + key.size() || id < 0 || id >= limits.vocab_size) {
      bad_request("logit_bias", fmt::format("'logit_bias' keys must be token ids below {}, not '{}'",
                                            limits.vocab_size, key));
    }
    if (!bias.is_number() || !(bias.get<double>() >= -100 && bias.get<double>() <= 100)) {
      bad_request("logit_bias",
                  fmt::format("'logit_bias' values must be numbers in [-100, 100] (token {})", key));
    }
    s.logit_bias.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias.get<double>()));
  }
}

GenerationFields parse_fields(const Json& body, const RequestLimits& limits, bool chat) {
  if (!body.is_object()) bad_request("", "the request body must be a JSON object");
  parse_unsupported(body);
  GenerationFields f;
  const Json* model = field(body, "model");
  if (!model) bad_request("model", "'model' is required");
  if (!model->is_string()) wrong_type("model", "a string", *model);
  f.model = model->get<std::string>();
  // max_completion_tokens replaces the deprecated max_tokens, and wins where both are given (as in vLLM).
  const char* length_field = "max_tokens";
  // llama.cpp's n_predict, where max_tokens is not given: -1 is no limit.
  if (auto v = get_int(body, "n_predict", -1, std::numeric_limits<int64_t>::max())) {
    if (*v == 0) bad_request("n_predict", "'n_predict' must be -1 (no limit) or positive");
    if (*v > 0) f.max_tokens = v;
    length_field = "n_predict";
  }
  if (auto v = get_int(body, "max_tokens", 1, std::numeric_limits<int64_t>::max())) {
    f.max_tokens = v;
    length_field = "max_tokens";
  }
  if (chat) {
    if (auto v = get_int(body, "max_completion_tokens", 1, std::numeric_limits<int64_t>::max())) {
      f.max_tokens = v;
      length_field = "max_completion_tokens";
    }
  }
  if (f.max_tokens && *f.max_tokens > limits.max_tokens) {
    bad_request(length_field, fmt::format("{} {} exceeds this server's limit of {}", length_field,
                                          *f.max_tokens, limits.max_tokens));
  }
  parse_stop(body, limits, f.stop);
  runtime::SamplingParams& s = f.sampling;
  s.temperature = static_cast<float>(get_number(body, "temperature", 0, 2).value_or(1.0));
  s.top_p = static_cast<float>(get_number(body, "top_p", 0, 1).value_or(1.0));
  if (s.top_p <= 0.0f) bad_request("top_p", "'top_p' must be greater than 0");
  s.top_k = static_cast<int32_t>(get_int(body, "top_k", -1, std::numeric_limits<int32_t>::max()).value_or(0));
  s.min_p = static_cast<float>(get_number(body, "min_p", 0, 1).value_or(0.0));
  s.presence_penalty = static_cast<float>(get_number(body, "presence_penalty", -2, 2).value_or(0.0));
  s.frequency_penalty = static_cast<float>(get_number(body, "frequency_penalty", -2, 2).value_or(0.0));
  // repeat_penalty is llama.cpp's name for it.
  const auto repetition = get_number(body, "repetition_penalty", 0.01, 100);
  const auto repeat = get_number(body, "repeat_penalty", 0.01, 100);
  if (repetition && repeat && *repetition != *repeat)
    bad_request("repeat_penalty", "'repeat_penalty' and 'repetition_penalty' name one penalty: give one");
  s.repetition_penalty = static_cast<float>(repetition.value_or(repeat.value_or(1.0)));
  if (const Json* seed = field(body, "seed")) {
    if (!seed->is_number_integer()) wrong_type("seed", "an integer", *seed);
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
    f.seeded = true;
  }
  parse_logit_bias(body, limits, s);
  f.n = get_int(body, "n", 1, limits.max_n).value_or(1);
  f.stream = get_bool(body, "stream").value_or(false);
  if (const Json* options = field(body, "stream_options")) {
    if (!options->is_object()) wrong_type("stream_options", "an object", *options);
    if (!f.stream) bad_request("stream_options", "'stream_options' is only allowed with 'stream': true");
    f.include_usage = get_bool(*options, "include_usage", "stream_options").value_or(false);
  }
  if (chat) {
    const bool logprobs = get_bool(body, "logprobs").value_or(false);
    const auto top = get_int(body, "top_logprobs", 0, 20);
    if (top && !logprobs) bad_request("top_logprobs", "'top_logprobs' requires 'logprobs': true");
    if (logprobs) f.top_logprobs = static_cast<int>(top.value_or(0));
  } else {
    if (auto v = get_int(body, "logprobs", 0, 20)) f.top_logprobs = static_cast<int>(*v);
  }
  return f;
}

void check_content(const Json& content, const std::string& param, bool nullable) {
  if (content.is_null()) {
    if (!nullable) bad_request(param, fmt::format("'{}' is required", param));
    return;
  }
  if (content.is_string()) return;
  if (!content.is_array()) wrong_type(param, "a string or an array of content parts", content);
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string at = fmt::format("{}[{}]", param, i);
    if (!part.is_object()) wrong_type(at, "an object", part);
    const Json* type = field(part, "type");
    if (!type || !type->is_string()) bad_request(at + ".type", fmt::format("'{}.type' must be a string", at));
    if (type->get<std::string>() != "text") {
      bad_request(at + ".type", fmt::format("content part type '{}' is not supported: tern is text only",
                                            type->get<std::string>()));
    }
    const Json* text = field(part, "text");
    if (!text || !text->is_string()) bad_request(at + ".text", fmt::format("'{}.text' must be a string", at));
  }
}

void check_tool_calls(const Json& calls, const std::string& at) {
  if (!calls.is_array()) wrong_type(at, "an array", calls);
  for (size_t j = 0; j < calls.size(); ++j) {
    const std::string call = fmt::format("{}[{}]", at, j);
    if (!calls[j].is_object()) wrong_type(call, "an object", calls[j]);
    const Json* function = field(calls[j], "function");
    if (!function || !function->is_object())
      bad_request(call + ".function", fmt::format("'{}.function' must be an object", call));
    const Json* name = field(*function, "name");
    if (!name || !name->is_string())
      bad_request(call + ".function.name", fmt::format("'{}.function.name' must be a string", call));
    if (const Json* arguments = field(*function, "arguments");
        arguments && !arguments->is_string() && !arguments->is_object()) {
      wrong_type(call + ".function.arguments", "a JSON object or its text", *arguments);
    }
  }
}

void check_messages(const Json& body) {
  const Json* messages = field(body, "messages");
  if (!messages) bad_request("messages", "'messages' is required");
  if (!messages->is_array()) wrong_type("messages", "an array", *messages);
  if (messages->empty()) bad_request("messages", "'messages' must not be empty");
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    const std::string at = fmt::format("messages[{}]", i);
    if (!m.is_object()) wrong_type(at, "an object", m);
    const Json* role = field(m, "role");
    if (!role || !role->is_string()) bad_request(at + ".role", fmt::format("'{}.role' must be a string", at));
    const auto name = role->get<std::string>();
    if (name != "system" && name != "developer" && name != "user" && name != "assistant" && name != "tool") {
      bad_request(
          at + ".role",
          fmt::format("'{}.role' must be system, developer, user, assistant or tool, not '{}'", at, name));
    }
    const auto content = m.find("content");
    const bool has_tool_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
    if (content == m.end()) {
      if (!(name == "assistant" && has_tool_calls))
        bad_request(at + ".content", fmt::format("'{}.content' is required", at));
    } else {
      check_content(*content, at + ".content", name == "assistant" && has_tool_calls);
    }
    if (has_tool_calls) check_tool_calls(m["tool_calls"], at + ".tool_calls");
  }
}

// A past call's arguments as the template renders them: an object. OpenAI's form (and what tern returns)
// is the object as JSON text, so text is parsed; the template would drop it as it stands. Blank text is no
// arguments; text that is no object (a model's malformed call sent back) stays text, as it came.
Json messages_for_template(const Json& messages) {
  Json out = messages;
  for (Json& message : out) {
    const auto calls = message.find("tool_calls");
    if (calls == message.end() || !calls->is_array()) continue;
    for (Json& call : *calls) {
      Json& function = call["function"];  // an object: check_tool_calls
      const auto arguments = function.find("arguments");
      if (arguments == function.end() || !arguments->is_string()) continue;
      Json parsed = Json::object();
      if (const std::string& text = arguments->get_ref<const std::string&>();
          text.find_first_not_of(" \t\r\n") != std::string::npos) {
        try {
          parsed = parse_json(text, "", "arguments");
        } catch (const ApiError&) {
          continue;  // not JSON, or nested past the limit: stays text
        }
      }
      if (parsed.is_object()) *arguments = std::move(parsed);
    }
  }
  return out;
}

void parse_tools(const Json& body, ChatRequest& request) {
  if (const Json* tools = field(body, "tools")) {
    if (!tools->is_array()) wrong_type("tools", "an array", *tools);
    for (size_t i = 0; i < tools->size(); ++i) {
      const Json& t = (*tools)[i];
      const std::string at = fmt::format("tools[{}]", i);
      if (!t.is_object()) wrong_type(at, "an object", t);
      const Json* type = field(t, "type");
      if (!type || *type != "function")
        bad_request(at + ".type", fmt::format("'{}.type' must be \"function\"", at));
      const Json* function = field(t, "function");
      if (!function || !function->is_object())
        bad_request(at + ".function", fmt::format("'{}.function' must be an object", at));
      const Json* name = field(*function, "name");
      if (!name || !name->is_string() || name->get<std::string>().empty()) {
        bad_request(at + ".function.name", fmt::format("'{}.function.name' must be a non-empty string", at));
      }
      if (const Json* params = field(*function, "parameters"); params && !params->is_object()) {
        wrong_type(at + ".function.parameters", "an object", *params);
      }
    }
    request.tools = *tools;
  }
  request.parallel_tool_calls = get_bool(body, "parallel_tool_calls").value_or(true);
  const Json* choice = field(body, "tool_choice");
  if (!choice) return;
  if (choice->is_string()) {
    const auto mode = choice->get<std::string>();
    if (mode == "auto") {
      request.tool_choice.mode = ToolChoice::Mode::kAuto;
    } else if (mode == "none") {
      request.tool_choice.mode = ToolChoice::Mode::kNone;
    } else if (mode == "required") {
      request.tool_choice.mode = ToolChoice::Mode::kRequired;
    } else {
      bad_request("tool_choice",
                  fmt::format("'tool_choice' must be auto, none, required or a function, not '{}'", mode));
    }
  } else if (choice->is_object()) {
    const Json* function = field(*choice, "function");
    const Json* name = function && function->is_object() ? field(*function, "name") : nullptr;
    if (!name || !name->is_string())
      bad_request("tool_choice.function.name", "'tool_choice.function.name' must be a string");
    request.tool_choice.mode = ToolChoice::Mode::kNamed;
    request.tool_choice.name = name->get<std::string>();
    bool known = false;
    for (const Json& t : request.tools) known = known || t["function"]["name"] == request.tool_choice.name;
    if (!known) {
      bad_request("tool_choice",
                  fmt::format("tool_choice names '{}', which is not in 'tools'", request.tool_choice.name));
    }
  } else {
    wrong_type("tool_choice", "a string or an object", *choice);
  }
  if (request.tool_choice.mode == ToolChoice::Mode::kRequired && request.tools.empty()) {
    bad_request("tool_choice", "'tool_choice' required needs 'tools'");
  }
}

}  // namespace

std::optional<bool> get_bool(const Json& body, const char* name, const char* parent) {
  const Json* v = field(body, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(parent ? fmt::format("{}.{}", parent, name) : name, "a boolean", *v);
  return v->get<bool>();
}

Json parse_body(const std::string& body) {
  const Json parsed = parse_json(body, "", "the request body");
  if (!parsed.is_object()) bad_request("", "the request body must be a JSON object");
  return parsed;
}

ChatRequest parse_chat_request(const Json& body, const RequestLimits& limits) {
  GenerationFields fields = parse_fields(body, limits, true);
  ChatRequest request = parse_chat_prompt(body);
  request.fields = std::move(fields);
  request.thinking_budget = get_int(body, "thinking_budget", 0, std::numeric_limits<int32_t>::max());
  return request;
}

ChatRequest parse_chat_prompt(const Json& body) {
  ChatRequest request;
  check_messages(body);
  parse_tools(body, request);
  request.body = Json::object();
  request.body["messages"] = messages_for_template(body["messages"]);
  if (request.tool_choice.mode != ToolChoice::Mode::kNone && !request.tools.empty()) {
    request.body["tools"] = request.tools;
  }
  if (const Json* kwargs = field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object()) wrong_type("chat_template_kwargs", "an object", *kwargs);
    // The template takes these from the request's own fields, checked above.
    for (const char* own : {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"}) {
      if (kwargs->contains(own)) {
        const std::string param = fmt::format("chat_template_kwargs.{}", own);
        bad_request(param, fmt::format("'{}' would replace what the request's own fields give", param));
      }
    }
    request.body["chat_template_kwargs"] = *kwargs;
    if (auto thinking = get_bool(*kwargs, "enable_thinking", "chat_template_kwargs"))
      request.enable_thinking = *thinking;
  }
  const bool generation_prompt = get_bool(body, "add_generation_prompt").value_or(true);
  if (get_bool(body, "continue_final_message").value_or(false)) {
    if (generation_prompt && field(body, "add_generation_prompt")) {
      bad_request(
          "continue_final_message",
          "'continue_final_message' continues the last message: 'add_generation_prompt' must be false");
    }
    const Json& last = body["messages"].back();
    if (last["role"] != "assistant" || !last.contains("content") || !last["content"].is_string() ||
        last["content"].get<std::string>().empty()) {
      bad_request("continue_final_message",
                  "'continue_final_message' needs a last message from the assistant with text content");
    }
    if (request.tool_choice.mode == ToolChoice::Mode::kRequired ||
        request.tool_choice.mode == ToolChoice::Mode::kNamed) {
      bad_request("tool_choice", "a required or named 'tool_choice' cannot continue a final message");
    }
    request.continued_reply = last["content"].get<std::string>();
    request.body["add_generation_prompt"] = false;
  } else if (!generation_prompt) {
    request.body["add_generation_prompt"] = false;
  }
  return request;
}

CompletionRequest parse_completion_request(const Json& body, const RequestLimits& limits) {
  CompletionRequest request;
  request.fields = parse_fields(body, limits, false);
  const Json* prompt = field(body, "prompt");
  if (!prompt) bad_request("prompt", "'prompt' is required");
  const Json* single = prompt;
  if (prompt->is_array() && prompt->size() == 1 && ((*prompt)[0].is_string() || (*prompt)[0].is_array())) {
    single = &(*prompt)[0];
  }
  if (single->is_string()) {
    request.prompt_text = single->get<std::string>();
    if (request.prompt_text->empty()) bad_request("prompt", "'prompt' must not be empty");
  } else if (single->is_array()) {
    if (single->empty()) bad_request("prompt", "'prompt' must not be empty");
    for (const Json& id : *single) {
      if (id.is_string())
        bad_request("prompt", "'prompt' holds one prompt; several prompts per request are not supported");
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        wrong_type("prompt", "a string or an array of token ids", id);
      }
      request.prompt_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
  } else {
    wrong_type("prompt", "a string or an array of token ids", *prompt);
  }
  request.echo = get_bool(body, "echo").value_or(false);
  return request;
}

}  // namespace tern::server
