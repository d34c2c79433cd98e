// The model's chat template (model-spec §7.4): parsed once at model load from
// `tokenizer.chat_template`, rendered per OpenAI chat-completions request exactly as Hugging Face's
// apply_chat_template renders it with Python jinja2.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "gguf/reader.h"
#include "text/jinja/template.h"

namespace tern::text {

struct SpecialTokens {
  std::string bos_token;
  std::string eos_token;
};

class ChatTemplate {
 public:
  // Throws Error(kUnsupported) naming the construct and line the engine cannot render.
  explicit ChatTemplate(std::string_view source, SpecialTokens special_tokens = {});

  // `request` is a chat-completions body: messages, optional tools, optional chat_template_kwargs
  // (passed as template variables), optional add_generation_prompt (default true). Returns the prompt
  // bytes. Throws Error(kInput) for a malformed request, image/video content parts (tern is text only)
  // and errors the template raises.
  std::string render(const nlohmann::ordered_json& request) const;

 private:
  jinja::Template template_;
  SpecialTokens special_tokens_;
};

// The template of a model file: tokenizer.chat_template, with bos/eos token texts looked up by
// tokenizer.ggml.bos_token_id / eos_token_id (empty when absent). Throws Error(kConfig) naming the
// file and key when the template is missing or an id is not a token.
ChatTemplate load_chat_template(const gguf::Reader& file);

}  // namespace tern::text
