// A model ready to generate: the weights, the tokenizer and the chat template from its header, and the
// token sets generation needs. Loading parses the chat template, so a template tern cannot render is a
// load error, never a silently different prompt.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace tern::runtime {

struct LoadedModel {
  std::unique_ptr<const model::Model> model;
  std::unique_ptr<const text::Tokenizer> tokenizer;
  std::optional<text::ChatTemplate> chat_template;  // absent if the file has none
  std::vector<int32_t> stop_tokens;                 // end-of-generation ids (model-spec §11.6)
  std::vector<int32_t> banned_tokens;               // padding rows, never sampled

  static LoadedModel load(const std::string& path, model::LoadOptions options = {});

  // The prompt ids of `text` (a BOS first only if the vocabulary asks for one).
  std::vector<int32_t> encode_prompt(const std::string& text) const;
  // Renders a chat-completions request body; Error(kInput) if the model has no chat template.
  std::string render_chat(const nlohmann::ordered_json& request) const;
};

}  // namespace tern::runtime
