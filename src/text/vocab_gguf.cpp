// Vocab <-> tokenizer.ggml.* keys (model-spec §2.5).
#include "core/error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "text/vocab.h"

namespace tern::text {

namespace {

std::vector<std::string> string_array(const gguf::Reader& reader, std::string_view key) {
  const gguf::Array& array = reader.get_array(key);
  if (array.elem_type != gguf::ValueType::kString) {
    fail(ErrorKind::kConfig, "{}: {} is an array of {}, not of strings", reader.name(), key,
         gguf::value_type_name(array.elem_type));
  }
  std::vector<std::string> out;
  out.reserve(array.items.size());
  for (const gguf::Value& item : array.items) out.push_back(std::get<std::string>(item.data));
  return out;
}

std::optional<uint32_t> token_id(const gguf::Reader& reader, std::string_view key, size_t n_tokens) {
  const std::optional<uint64_t> id = reader.get_uint_or(key);
  if (id && *id >= n_tokens) {
    fail(ErrorKind::kConfig, "{}: {} = {} is outside the vocabulary of {} tokens", reader.name(), key, *id,
         n_tokens);
  }
  return id ? std::optional<uint32_t>(static_cast<uint32_t>(*id)) : std::nullopt;
}

}  // namespace

Vocab load_vocab(const gguf::Reader& reader) {
  const std::string& model = reader.get_string("tokenizer.ggml.model");
  if (model != "gpt2") {
    fail(ErrorKind::kUnsupported, "{}: tokenizer.ggml.model '{}' is not implemented (gpt2)", reader.name(),
         model);
  }
  Vocab vocab;
  vocab.pre = parse_pre_tokenizer(reader.get_string("tokenizer.ggml.pre"));
  vocab.tokens = string_array(reader, "tokenizer.ggml.tokens");

  const gguf::Array& types = reader.get_array("tokenizer.ggml.token_type");
  if (!gguf::is_integer_type(types.elem_type) || types.items.size() != vocab.tokens.size()) {
    fail(ErrorKind::kConfig, "{}: tokenizer.ggml.token_type must be {} integers", reader.name(),
         vocab.tokens.size());
  }
  vocab.types.reserve(types.items.size());
  for (size_t i = 0; i < types.items.size(); ++i) {
    const gguf::Value& item = types.items[i];
    const int64_t type = std::holds_alternative<int64_t>(item.data)
                             ? std::get<int64_t>(item.data)
                             : static_cast<int64_t>(std::get<uint64_t>(item.data));
    if (type < static_cast<int64_t>(TokenType::kNormal) || type > static_cast<int64_t>(TokenType::kByte)) {
      fail(ErrorKind::kConfig, "{}: tokenizer.ggml.token_type[{}] = {} is not a token type", reader.name(), i,
           type);
    }
    vocab.types.push_back(static_cast<TokenType>(type));
  }

  for (std::string& merge : string_array(reader, "tokenizer.ggml.merges")) {
    const size_t space = merge.find(' ');
    if (space == std::string::npos) {
      fail(ErrorKind::kConfig, "{}: tokenizer.ggml.merges[{}] '{}' is not 'left right'", reader.name(),
           vocab.merges.size(), merge);
    }
    vocab.merges.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }

  vocab.eos_id = token_id(reader, "tokenizer.ggml.eos_token_id", vocab.tokens.size());
  vocab.pad_id = token_id(reader, "tokenizer.ggml.padding_token_id", vocab.tokens.size());
  vocab.bos_id = token_id(reader, "tokenizer.ggml.bos_token_id", vocab.tokens.size());
  if (reader.has("tokenizer.ggml.add_bos_token"))
    vocab.add_bos = reader.get_bool("tokenizer.ggml.add_bos_token");
  if (reader.has("tokenizer.chat_template"))
    vocab.chat_template = reader.get_string("tokenizer.chat_template");
  return vocab;
}

void write_vocab(gguf::Writer& writer, const Vocab& vocab) {
  writer.set("tokenizer.ggml.model", gguf::Value::string("gpt2"));
  writer.set("tokenizer.ggml.pre", gguf::Value::string(pre_tokenizer_name(vocab.pre)));
  writer.set("tokenizer.ggml.tokens", gguf::Value::string_array(vocab.tokens));
  std::vector<int32_t> types;
  types.reserve(vocab.types.size());
  for (TokenType type : vocab.types) types.push_back(static_cast<int32_t>(type));
  writer.set("tokenizer.ggml.token_type", gguf::Value::i32_array(types));
  std::vector<std::string> merges;
  merges.reserve(vocab.merges.size());
  for (const auto& [left, right] : vocab.merges) merges.push_back(left + " " + right);
  writer.set("tokenizer.ggml.merges", gguf::Value::string_array(merges));
  if (vocab.eos_id) writer.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(*vocab.eos_id));
  if (vocab.pad_id) writer.set("tokenizer.ggml.padding_token_id", gguf::Value::u32(*vocab.pad_id));
  if (vocab.bos_id) writer.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(*vocab.bos_id));
  writer.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(vocab.add_bos));
  if (!vocab.chat_template.empty())
    writer.set("tokenizer.chat_template", gguf::Value::string(vocab.chat_template));
}

}  // namespace tern::text
