// The built-in tokenizer of synthetic models: byte-level BPE trained on a small embedded corpus, the
// Qwen3.5 special tokens (model-spec §7.3) and a Qwen-style chat template (§7.4), padded to the
// model's vocabulary rows like the real converter does (§2.5).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/vocab.h"

namespace tern::tools {

// Exactly `vocab_size` tokens: 256 byte tokens, merges while they fit, the specials, "[PAD<i>]"
// rows; eos <|im_end|>, pad <|endoftext|>, no BOS, pre-tokenizer qwen35. Throws Error(kInput) if
// vocab_size cannot hold the byte tokens and the specials.
text::Vocab builtin_vocab(int64_t vocab_size);

// A Hugging Face tokenizer.json (+ tokenizer_config.json) read from disk through
// text::import_hf_tokenizer, unpadded; the built-in chat template if the config has none.
// Throws Error(kIo) if a file cannot be read.
text::Vocab import_vocab_files(const std::string& tokenizer_path, const std::string* config_path);

// Appends "[PAD<i>]" UNUSED rows up to `size` tokens, as the converter does (model-spec §2.5).
// Throws Error(kInput) if the vocabulary already has more than `size` tokens.
void pad_vocab(text::Vocab& vocab, int64_t size);

// The Qwen3.5 added tokens in id order, starting at <|endoftext|> (model-spec §7.3).
const std::vector<std::string_view>& qwen_special_tokens();

// A few KB of English, code and other-language text the BPE merges are trained on.
std::string_view builtin_corpus();

// A Qwen-style chat template written for tern (model-spec §7.4 behaviour).
std::string_view builtin_chat_template();

}  // namespace tern::tools
