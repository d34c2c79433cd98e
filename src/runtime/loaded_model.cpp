#include "runtime/loaded_model.h"

#include "core/error.h"
#include "text/stop_tokens.h"

namespace tern::runtime {

LoadedModel LoadedModel::load(const std::string& path, model::LoadOptions options) {
  LoadedModel loaded;
  loaded.model = model::Model::open(path, options);
  text::Vocab vocab = text::load_vocab(loaded.model->file());
  if (static_cast<int64_t>(vocab.tokens.size()) != loaded.model->config().vocab_size) {
    fail(ErrorKind::kConfig, "{}: tokenizer.ggml.tokens has {} entries but token_embd.weight has {} rows",
         path, vocab.tokens.size(), loaded.model->config().vocab_size);
  }
  if (!vocab.chat_template.empty()) {
    text::SpecialTokens special;
    if (vocab.eos_id) special.eos_token = vocab.tokens[*vocab.eos_id];
    if (vocab.bos_id && *vocab.bos_id < vocab.tokens.size()) special.bos_token = vocab.tokens[*vocab.bos_id];
    loaded.chat_template.emplace(vocab.chat_template, special);
  }
  loaded.stop_tokens = text::end_of_generation_ids(vocab);
  for (size_t id = 0; id < vocab.types.size(); ++id) {
    if (vocab.types[id] == text::TokenType::kUnused) loaded.banned_tokens.push_back(static_cast<int32_t>(id));
  }
  loaded.tokenizer = std::make_unique<const text::Tokenizer>(std::move(vocab));
  return loaded;
}

std::vector<int32_t> LoadedModel::encode_prompt(const std::string& text) const {
  std::vector<int32_t> ids;
  if (tokenizer->add_bos()) ids.push_back(static_cast<int32_t>(*tokenizer->vocab().bos_id));
  const std::vector<int32_t> body = tokenizer->encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

std::string LoadedModel::render_chat(const nlohmann::ordered_json& request) const {
  if (!chat_template) fail(ErrorKind::kInput, "{}: the model has no chat template", model->file().name());
  return chat_template->render(request);
}

}  // namespace tern::runtime
