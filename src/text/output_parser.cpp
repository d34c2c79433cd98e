#include "text/output_parser.h"

#include <algorithm>
#include <array>

namespace tern::text {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolCallOpen = "<tool_call>";
constexpr std::string_view kToolCallClose = "</tool_call>";

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; });
}

std::string_view trim_blank(std::string_view text) {
  while (!text.empty() && is_blank(text.substr(0, 1))) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.substr(text.size() - 1))) text.remove_suffix(1);
  return text;
}

// Length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t partial_tag_length(std::string_view text, std::string_view tag) {
  if (tag.empty()) return 0;
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

struct Found {
  size_t position = std::string_view::npos;
  std::string_view tag;
};

Found find_first(std::string_view text, std::initializer_list<std::string_view> tags) {
  Found first;
  for (const std::string_view tag : tags) {
    if (tag.empty()) continue;  // a tag not looked for
    const size_t at = text.find(tag);
    if (at < first.position) first = {at, tag};
  }
  return first;
}

// XML form: <function=NAME>\n<parameter=P>\nVALUE\n</parameter>...</function>. Parameters are
// returned raw (one framing newline removed each side); false if the shape is wrong.
bool parse_xml_call(std::string_view body, std::string& name,
                    std::vector<std::pair<std::string, std::string>>& params) {
  constexpr std::string_view kFunctionOpen = "<function=";
  constexpr std::string_view kFunctionClose = "</function>";
  constexpr std::string_view kParamOpen = "<parameter=";
  constexpr std::string_view kParamClose = "</parameter>";
  body = trim_blank(body);
  if (body.substr(0, kFunctionOpen.size()) != kFunctionOpen) return false;
  const size_t name_end = body.find('>');
  if (name_end == std::string_view::npos) return false;
  name = std::string(body.substr(kFunctionOpen.size(), name_end - kFunctionOpen.size()));
  if (name.empty()) return false;
  std::string_view rest = body.substr(name_end + 1);
  if (rest.size() < kFunctionClose.size() ||
      rest.substr(rest.size() - kFunctionClose.size()) != kFunctionClose)
    return false;
  rest.remove_suffix(kFunctionClose.size());
  while (true) {
    rest = trim_blank(rest);
    if (rest.empty()) return true;
    if (rest.substr(0, kParamOpen.size()) != kParamOpen) return false;
    const size_t key_end = rest.find('>');
    const size_t close = rest.find(kParamClose);
    if (key_end == std::string_view::npos || close == std::string_view::npos || close < key_end) return false;
    std::string_view value = rest.substr(key_end + 1, close - key_end - 1);
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    params.emplace_back(std::string(rest.substr(kParamOpen.size(), key_end - kParamOpen.size())),
                        std::string(value));
    rest.remove_prefix(close + kParamClose.size());
  }
}

}  // namespace

OutputParser::OutputParser(OutputParserConfig config)
    : config_(std::move(config)),
      state_(config_.thinking_open_in_prompt ? State::kReasoning : State::kContent) {}

Delta OutputParser::push(std::string_view text) {
  buffer_ += text;
  Delta delta;
  process(delta, false);
  return delta;
}

Delta OutputParser::finish() {
  Delta delta;
  process(delta, true);
  if (state_ == State::kToolCall) {
    // Never closed: the text is returned as it came.
    delta.malformed_tool_call = true;
    emit_text(delta, std::string(kToolCallOpen) + buffer_);
    buffer_.clear();
    state_ = State::kContent;
  }
  return delta;
}

void OutputParser::emit_text(Delta& delta, std::string_view text) {
  if (strip_leading_newlines_) {
    while (!text.empty() && text.front() == '\n') text.remove_prefix(1);
    if (text.empty()) return;
    strip_leading_newlines_ = false;
  }
  if (text.empty()) return;
  if (state_ == State::kReasoning) {
    delta.reasoning += text;
    return;
  }
  if (is_blank(text) && tool_call_count_ > 0) {
    held_whitespace_ += text;
    return;
  }
  delta.content += held_whitespace_;
  held_whitespace_.clear();
  delta.content += text;
  if (!is_blank(text)) content_started_ = true;
}

void OutputParser::process(Delta& delta, bool at_end) {
  while (!buffer_.empty()) {
    if (state_ == State::kToolCall) {
      const size_t close = buffer_.find(kToolCallClose);
      if (close == std::string::npos) return;  // the whole call is held until it closes
      const std::string body = buffer_.substr(0, close);
      buffer_.erase(0, close + kToolCallClose.size());
      state_ = State::kContent;
      close_tool_call(delta, body);
      continue;
    }
    const bool think_allowed = state_ == State::kContent && !content_started_ && tool_call_count_ == 0;
    const std::string_view call_open =
        tool_call_count_ < config_.max_tool_calls ? kToolCallOpen : std::string_view{};
    Found found = state_ == State::kReasoning ? find_first(buffer_, {kThinkClose})
                  : think_allowed             ? find_first(buffer_, {kThinkOpen, call_open})
                                              : find_first(buffer_, {call_open});
    if (found.position == std::string_view::npos) {
      // Release all but a possible tag start at the end.
      size_t hold = 0;
      if (!at_end) {
        if (state_ == State::kReasoning) {
          hold = partial_tag_length(buffer_, kThinkClose);
        } else {
          hold = partial_tag_length(buffer_, call_open);
          if (think_allowed) hold = std::max(hold, partial_tag_length(buffer_, kThinkOpen));
        }
      }
      emit_text(delta, std::string_view(buffer_).substr(0, buffer_.size() - hold));
      buffer_.erase(0, buffer_.size() - hold);
      return;
    }
    emit_text(delta, std::string_view(buffer_).substr(0, found.position));
    buffer_.erase(0, found.position + found.tag.size());
    if (found.tag == kThinkOpen && content_started_) {
      emit_text(delta, kThinkOpen);  // <think> only opens reasoning before any content
      continue;
    }
    if (found.tag == kThinkClose) {
      state_ = State::kContent;
      strip_leading_newlines_ = true;
    } else if (found.tag == kThinkOpen) {
      state_ = State::kReasoning;
      strip_leading_newlines_ = true;
    } else {
      state_ = State::kToolCall;
      strip_leading_newlines_ = false;
    }
  }
}

std::string OutputParser::parameter_schema_type(const std::string& function,
                                                const std::string& parameter) const {
  if (!config_.tools.is_array()) return "";
  for (const auto& tool : config_.tools) {
    const auto& fn = tool.contains("function") ? tool["function"] : tool;
    if (!fn.is_object() || fn.value("name", "") != function) continue;
    const auto params = fn.find("parameters");
    if (params == fn.end() || !params->is_object()) return "";
    const auto properties = params->find("properties");
    if (properties == params->end() || !properties->is_object() || !properties->contains(parameter))
      return "";
    const auto& schema = (*properties)[parameter];
    return schema.is_object() && schema.contains("type") && schema["type"].is_string()
               ? schema["type"].get<std::string>()
               : "";
  }
  return "";
}

void OutputParser::close_tool_call(Delta& delta, std::string_view body) {
  ToolCall call;
  bool parsed = false;
  const std::string_view trimmed = trim_blank(body);
  if (!trimmed.empty() && trimmed.front() == '{') {
    const auto json = nlohmann::ordered_json::parse(trimmed, nullptr, false);
    if (json.is_object() && json.contains("name") && json["name"].is_string()) {
      call.name = json["name"].get<std::string>();
      const auto arguments = json.find("arguments");
      if (arguments == json.end() || arguments->is_null()) {
        call.arguments = "{}";
        parsed = true;
      } else if (arguments->is_object()) {
        call.arguments = arguments->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        parsed = true;
      } else if (arguments->is_string()) {  // already JSON text
        const auto inner = nlohmann::ordered_json::parse(arguments->get<std::string>(), nullptr, false);
        if (inner.is_object()) {
          call.arguments = inner.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
          parsed = true;
        }
      }
    }
  } else {
    std::vector<std::pair<std::string, std::string>> params;
    if (parse_xml_call(body, call.name, params)) {
      nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
      for (const auto& [key, raw] : params) {
        const std::string type = parameter_schema_type(call.name, key);
        nlohmann::ordered_json value = raw;
        if (type != "string") {
          auto typed = nlohmann::ordered_json::parse(raw, nullptr, false);
          if (!typed.is_discarded()) value = std::move(typed);
        }
        arguments[key] = std::move(value);
      }
      call.arguments = arguments.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      parsed = true;
    }
  }
  if (!parsed) {
    delta.malformed_tool_call = true;
    emit_text(delta, std::string(kToolCallOpen).append(body).append(kToolCallClose));
    return;
  }
  call.index = tool_call_count_++;
  call.id = config_.id_prefix + std::to_string(call.index);
  held_whitespace_.clear();
  delta.tool_calls.push_back(std::move(call));
}

}  // namespace tern::text
