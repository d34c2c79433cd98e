// The tokenizer vocabulary as the GGUF header carries it (model-spec §2.5, §7): byte-level BPE tokens,
// their types, the merges by rank, special ids and the chat template. Loaded from a model file, imported
// from a Hugging Face tokenizer.json, or written into a model (tern synth).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tern::gguf {
class Reader;
class Writer;
}  // namespace tern::gguf

namespace tern::text {

// Values of tokenizer.ggml.token_type.
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Values of tokenizer.ggml.pre this tokenizer implements (model-spec §7.2).
enum class PreTokenizer { kQwen35, kQwen2 };

const char* pre_tokenizer_name(PreTokenizer pre);
// Throws Error(kUnsupported) for any other name.
PreTokenizer parse_pre_tokenizer(std::string_view name);

struct Vocab {
  std::vector<std::string> tokens;  // NORMAL tokens byte-level encoded; added tokens as their text
  std::vector<TokenType> types;     // same length as tokens
  std::vector<std::pair<std::string, std::string>> merges;  // rank = index
  std::optional<uint32_t> eos_id;
  std::optional<uint32_t> pad_id;
  std::optional<uint32_t> bos_id;
  bool add_bos = false;
  PreTokenizer pre = PreTokenizer::kQwen35;
  std::string chat_template;  // empty if none
};

// Reads tokenizer.ggml.* and tokenizer.chat_template. Throws Error(kConfig) naming the key if a key is
// missing, mistyped or inconsistent (lengths, ids out of range, model not gpt2).
Vocab load_vocab(const gguf::Reader& reader);

// Writes the keys load_vocab reads (model gpt2).
void write_vocab(gguf::Writer& writer, const Vocab& vocab);

// Maps a Hugging Face tokenizer.json (+ optional tokenizer_config.json) the way llama.cpp's converter does:
// vocab ids from model.vocab and added_tokens; an added token is CONTROL if marked special or spelled
// <|...|>, else USER_DEFINED; ids with no token become "[PAD<i>]" UNUSED; eos/pad/bos/add_bos and the chat
// template come from the config. `pad_to_size` (0: none) pads the vocabulary to that many entries.
// Throws Error(kInput) naming the file and field on malformed input, Error(kUnsupported) for a model,
// pre-tokenizer or added-token option this tokenizer does not implement.
Vocab import_hf_tokenizer(const std::string& tokenizer_json, const std::string* tokenizer_config_json,
                          size_t pad_to_size = 0);

}  // namespace tern::text
