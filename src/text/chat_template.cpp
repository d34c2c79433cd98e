#include "text/chat_template.h"

#include "core/error.h"

namespace tern::text {
namespace {

bool is_media_part(const nlohmann::ordered_json& part) {
  if (!part.is_object()) return false;
  for (const char* key : {"image", "image_url", "video", "video_url", "input_audio", "audio"})
    if (part.contains(key)) return true;
  const auto type = part.find("type");
  return type != part.end() && type->is_string() && *type != "text";
}

void check_messages(const nlohmann::ordered_json& messages) {
  if (!messages.is_array()) fail(ErrorKind::kInput, "request: 'messages' must be an array");
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& message = messages[i];
    if (!message.is_object()) fail(ErrorKind::kInput, "request: messages[{}] must be an object", i);
    const auto content = message.find("content");
    if (content == message.end() || !content->is_array()) continue;
    for (size_t k = 0; k < content->size(); ++k)
      if (is_media_part((*content)[k]))
        fail(ErrorKind::kInput, "request: messages[{}].content[{}] is not text; tern is a text-only engine",
             i, k);
  }
}

// HF's apply_chat_template fills `reasoning_content` (and `thinking`) from whichever of
// reasoning_content / thinking / reasoning is set first, so templates see the same field whatever the
// client called it.
nlohmann::ordered_json alias_reasoning_fields(const nlohmann::ordered_json& messages) {
  nlohmann::ordered_json aliased = nlohmann::ordered_json::array();
  for (const auto& message : messages) {
    const nlohmann::ordered_json* reasoning = nullptr;
    for (const char* key : {"reasoning_content", "thinking", "reasoning"}) {
      const auto it = message.find(key);
      if (it != message.end() && !it->is_null()) {
        reasoning = &*it;
        break;
      }
    }
    if (!reasoning) {
      aliased.push_back(message);
      continue;
    }
    nlohmann::ordered_json copy = nlohmann::ordered_json::object();
    copy["thinking"] = *reasoning;
    for (const auto& [key, value] : message.items()) copy[key] = value;
    copy["reasoning_content"] = *reasoning;
    aliased.push_back(std::move(copy));
  }
  return aliased;
}

void set_variable(jinja::ValueDict& variables, const std::string& name, jinja::Value value) {
  for (auto& [key, existing] : variables)
    if (key == name) {
      existing = std::move(value);
      return;
    }
  variables.emplace_back(name, std::move(value));
}

}  // namespace

ChatTemplate::ChatTemplate(std::string_view source, SpecialTokens special_tokens)
    : template_(source), special_tokens_(std::move(special_tokens)) {}

std::string ChatTemplate::render(const nlohmann::ordered_json& request) const {
  if (!request.is_object()) fail(ErrorKind::kInput, "request: body must be a JSON object");
  const auto messages = request.find("messages");
  if (messages == request.end()) fail(ErrorKind::kInput, "request: 'messages' is missing");
  check_messages(*messages);

  // The variables HF's apply_chat_template passes: special tokens, then messages, tools (None when
  // absent), documents, add_generation_prompt, then the caller's kwargs, which may override any of them.
  jinja::ValueDict variables;
  set_variable(variables, "bos_token", jinja::Value::string(special_tokens_.bos_token));
  set_variable(variables, "eos_token", jinja::Value::string(special_tokens_.eos_token));
  set_variable(variables, "messages", jinja::Value::from_json(alias_reasoning_fields(*messages)));
  const auto tools = request.find("tools");
  set_variable(
      variables, "tools",
      tools == request.end() || tools->is_null() ? jinja::Value::none() : jinja::Value::from_json(*tools));
  set_variable(variables, "documents", jinja::Value::none());
  bool add_generation_prompt = true;
  if (const auto it = request.find("add_generation_prompt"); it != request.end()) {
    if (!it->is_boolean()) fail(ErrorKind::kInput, "request: 'add_generation_prompt' must be a boolean");
    add_generation_prompt = it->get<bool>();
  }
  set_variable(variables, "add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  if (const auto kwargs = request.find("chat_template_kwargs");
      kwargs != request.end() && !kwargs->is_null()) {
    if (!kwargs->is_object()) fail(ErrorKind::kInput, "request: 'chat_template_kwargs' must be an object");
    for (const auto& [key, value] : kwargs->items())
      set_variable(variables, key, jinja::Value::from_json(value));
  }
  return template_.render(variables);
}

namespace {

std::string token_text(const gguf::Reader& file, std::string_view id_key) {
  const std::optional<uint64_t> id = file.get_uint_or(id_key);
  if (!id) return "";
  const gguf::Array& tokens = file.get_array("tokenizer.ggml.tokens");
  if (*id >= tokens.items.size() || !std::holds_alternative<std::string>(tokens.items[*id].data))
    fail(ErrorKind::kConfig, "{}: {} = {} is not a token id", file.name(), id_key, *id);
  return std::get<std::string>(tokens.items[*id].data);
}

}  // namespace

ChatTemplate load_chat_template(const gguf::Reader& file) {
  constexpr std::string_view kKey = "tokenizer.chat_template";
  if (!file.has(kKey)) fail(ErrorKind::kConfig, "{}: {} is missing", file.name(), kKey);
  return ChatTemplate(file.get_string(kKey), SpecialTokens{token_text(file, "tokenizer.ggml.bos_token_id"),
                                                           token_text(file, "tokenizer.ggml.eos_token_id")});
}

}  // namespace tern::text
