#include "text/vocab.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "text/pretokenizer.h"

namespace tern::text {

using nlohmann::json;

const char* pre_tokenizer_name(PreTokenizer pre) {
  switch (pre) {
    case PreTokenizer::kQwen35:
      return "qwen35";
    case PreTokenizer::kQwen2:
      return "qwen2";
  }
  return "?";
}

PreTokenizer parse_pre_tokenizer(std::string_view name) {
  if (name == "qwen35") return PreTokenizer::kQwen35;
  if (name == "qwen2") return PreTokenizer::kQwen2;
  fail(ErrorKind::kUnsupported, "tokenizer.ggml.pre '{}' is not implemented (qwen35, qwen2)", name);
}

namespace {

json parse_json(const std::string& text, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail(ErrorKind::kInput, "{}: not valid JSON: {}", what, e.what());
  }
}

// The text of a special-token entry of tokenizer_config.json: a string, an AddedToken object or null.
std::optional<std::string> config_token_text(const json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  fail(ErrorKind::kInput, "tokenizer_config.json: '{}' is neither a string nor an added token", key);
}

bool looks_like_control(const std::string& text) {
  return text.size() >= 4 && text.starts_with("<|") && text.ends_with("|>");
}

void check_supported_model(const json& model) {
  if (model.value("type", std::string{}) != "BPE") {
    fail(ErrorKind::kUnsupported, "tokenizer.json: model.type must be BPE (byte-level, model-spec §7.1)");
  }
  if (model.contains("byte_fallback") && model["byte_fallback"].is_boolean() && model["byte_fallback"]) {
    fail(ErrorKind::kUnsupported, "tokenizer.json: model.byte_fallback is not supported");
  }
  if (model.contains("dropout") && !model["dropout"].is_null()) {
    fail(ErrorKind::kUnsupported, "tokenizer.json: model.dropout is not supported");
  }
  if (model.value("continuing_subword_prefix", json("")).is_string() &&
      !model.value("continuing_subword_prefix", std::string{}).empty()) {
    fail(ErrorKind::kUnsupported, "tokenizer.json: model.continuing_subword_prefix is not supported");
  }
}

void check_supported_normalizer(const json& tj) {
  auto it = tj.find("normalizer");
  if (it == tj.end() || it->is_null() || it->value("type", std::string{}) != "NFC") {
    fail(ErrorKind::kUnsupported, "tokenizer.json: normalizer must be NFC (model-spec §7.1)");
  }
}

// Finds the Split regex of the pre-tokenizer (Sequence[Split, ByteLevel(use_regex=false)]).
PreTokenizer detect_pre_tokenizer(const json& tj) {
  const json* split = nullptr;
  auto it = tj.find("pre_tokenizer");
  if (it != tj.end() && it->is_object()) {
    if (it->value("type", std::string{}) == "Split") split = &*it;
    if (it->value("type", std::string{}) == "Sequence" && it->contains("pretokenizers") &&
        (*it)["pretokenizers"].is_array()) {
      for (const json& step : (*it)["pretokenizers"]) {
        if (step.is_object() && step.value("type", std::string{}) == "Split") split = &step;
      }
    }
  }
  if (split == nullptr || !split->contains("pattern") || !(*split)["pattern"].is_object() ||
      !(*split)["pattern"].contains("Regex") || !(*split)["pattern"]["Regex"].is_string()) {
    fail(ErrorKind::kUnsupported, "tokenizer.json: pre_tokenizer has no Split regex (model-spec §7.2)");
  }
  const std::string pattern = (*split)["pattern"]["Regex"].get<std::string>();
  if (pattern == pre_tokenizer_regex(PreTokenizer::kQwen35)) return PreTokenizer::kQwen35;
  if (pattern == pre_tokenizer_regex(PreTokenizer::kQwen2)) return PreTokenizer::kQwen2;
  fail(ErrorKind::kUnsupported, "tokenizer.json: pre-tokenizer regex is neither qwen35 nor qwen2: {}",
       pattern);
}

std::pair<std::string, std::string> parse_merge(const json& merge, size_t rank) {
  if (merge.is_string()) {
    const std::string& text = merge.get_ref<const std::string&>();
    const size_t space = text.find(' ');
    if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
      fail(ErrorKind::kInput, "tokenizer.json: merge {} '{}' is not 'left right'", rank, text);
    }
    return {text.substr(0, space), text.substr(space + 1)};
  }
  if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  }
  fail(ErrorKind::kInput, "tokenizer.json: merge {} is neither 'left right' nor [left, right]", rank);
}

void place_token(Vocab& vocab, size_t id, std::string text, TokenType type) {
  if (id >= vocab.tokens.size()) {
    vocab.tokens.resize(id + 1);
    vocab.types.resize(id + 1, TokenType::kUnused);
  }
  vocab.tokens[id] = std::move(text);
  vocab.types[id] = type;
}

std::optional<uint32_t> find_token_id(const Vocab& vocab, const std::optional<std::string>& text,
                                      const char* key) {
  if (!text) return std::nullopt;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.types[id] != TokenType::kUnused && vocab.tokens[id] == *text) return static_cast<uint32_t>(id);
  }
  fail(ErrorKind::kInput, "tokenizer_config.json: {} '{}' is not a token", key, *text);
}

}  // namespace

Vocab import_hf_tokenizer(const std::string& tokenizer_json, const std::string* tokenizer_config_json,
                          size_t pad_to_size) {
  const json tj = parse_json(tokenizer_json, "tokenizer.json");
  if (!tj.is_object() || !tj.contains("model") || !tj["model"].is_object()) {
    fail(ErrorKind::kInput, "tokenizer.json: no model object");
  }
  const json& model = tj["model"];
  check_supported_model(model);
  check_supported_normalizer(tj);

  Vocab vocab;
  vocab.pre = detect_pre_tokenizer(tj);

  // A vocabulary larger than this is not a tokenizer but an attempt at a huge allocation.
  constexpr size_t kMaxVocab = size_t{1} << 24;
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    fail(ErrorKind::kInput, "tokenizer.json: model.vocab is not an object");
  }
  for (const auto& [text, id] : model["vocab"].items()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() >= kMaxVocab) {
      fail(ErrorKind::kInput, "tokenizer.json: model.vocab['{}'] is not an id below {}", text, kMaxVocab);
    }
    place_token(vocab, id.get<size_t>(), text, TokenType::kNormal);
  }

  if (tj.contains("added_tokens") && tj["added_tokens"].is_array()) {
    for (const json& added : tj["added_tokens"]) {
      if (!added.is_object() || !added.contains("id") || !added["id"].is_number_unsigned() ||
          added["id"].get<uint64_t>() >= kMaxVocab || !added.contains("content") ||
          !added["content"].is_string()) {
        fail(ErrorKind::kInput, "tokenizer.json: added_tokens entry {} lacks an id or content", added.dump());
      }
      const std::string content = added["content"].get<std::string>();
      for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
        if (added.value(flag, false)) {
          fail(ErrorKind::kUnsupported, "tokenizer.json: added token '{}' sets {} (not implemented)", content,
               flag);
        }
      }
      const bool control = added.value("special", false) || looks_like_control(content);
      place_token(vocab, added["id"].get<size_t>(), content,
                  control ? TokenType::kControl : TokenType::kUserDefined);
    }
  }

  if (!model.contains("merges") || !model["merges"].is_array()) {
    fail(ErrorKind::kInput, "tokenizer.json: model.merges is not an array");
  }
  vocab.merges.reserve(model["merges"].size());
  for (const json& merge : model["merges"]) vocab.merges.push_back(parse_merge(merge, vocab.merges.size()));

  if (pad_to_size != 0) {
    if (pad_to_size < vocab.tokens.size()) {
      fail(ErrorKind::kInput, "tokenizer.json: {} tokens do not fit the requested vocabulary size {}",
           vocab.tokens.size(), pad_to_size);
    }
    vocab.tokens.resize(pad_to_size);
    vocab.types.resize(pad_to_size, TokenType::kUnused);
  }
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.types[id] == TokenType::kUnused) vocab.tokens[id] = fmt::format("[PAD{}]", id);
  }

  if (tokenizer_config_json != nullptr) {
    const json config = parse_json(*tokenizer_config_json, "tokenizer_config.json");
    if (!config.is_object()) fail(ErrorKind::kInput, "tokenizer_config.json: not an object");
    vocab.eos_id = find_token_id(vocab, config_token_text(config, "eos_token"), "eos_token");
    vocab.pad_id = find_token_id(vocab, config_token_text(config, "pad_token"), "pad_token");
    vocab.bos_id = find_token_id(vocab, config_token_text(config, "bos_token"), "bos_token");
    auto add_bos = config.find("add_bos_token");
    if (add_bos != config.end() && add_bos->is_boolean()) vocab.add_bos = add_bos->get<bool>();
    auto chat_template = config.find("chat_template");
    if (chat_template != config.end()) {
      if (!chat_template->is_string()) {
        fail(ErrorKind::kUnsupported, "tokenizer_config.json: chat_template is not a single string");
      }
      vocab.chat_template = chat_template->get<std::string>();
    }
  }
  return vocab;
}

}  // namespace tern::text
