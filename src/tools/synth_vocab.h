// The built-in tokenizer of synthetic models: byte-level BPE trained on a small embedded corpus, the
// Qwen3.5 special tokens (model-spec §7.3) and a Qwen-style chat template (§7.4), padded to the
// model's vocabulary rows like the real converter does (§2.5).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tern::tools {

// tokenizer.ggml.token_type values (model-spec §2.5).
enum class TokenType : int32_t { kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5 };

struct SynthVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> token_types;
  std::vector<std::string> merges;
  uint32_t eos_id = 0;  // <|im_end|>
  uint32_t pad_id = 0;  // <|endoftext|>
  std::string chat_template;
};

// Exactly `vocab_size` tokens: 256 byte tokens, merges while they fit, the specials, "[PAD<i>]"
// rows. Throws Error(kInput) if vocab_size cannot hold the byte tokens and the specials.
SynthVocab builtin_vocab(int64_t vocab_size);

// The Qwen3.5 added tokens in id order, starting at <|endoftext|> (model-spec §7.3).
const std::vector<std::string_view>& qwen_special_tokens();

// A few KB of English, code and other-language text the BPE merges are trained on.
std::string_view builtin_corpus();

// A Qwen-style chat template written for tern (model-spec §7.4 behaviour).
std::string_view builtin_chat_template();

}  // namespace tern::tools
