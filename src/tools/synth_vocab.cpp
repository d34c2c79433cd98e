#include "tools/synth_vocab.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "core/error.h"
#include "tools/bpe_trainer.h"

namespace tern::tools {

const std::vector<std::string_view>& qwen_special_tokens() {
  static const std::vector<std::string_view> kTokens = {
      "<|endoftext|>",
      "<|im_start|>",
      "<|im_end|>",
      "<|object_ref_start|>",
      "<|object_ref_end|>",
      "<|box_start|>",
      "<|box_end|>",
      "<|quad_start|>",
      "<|quad_end|>",
      "<|vision_start|>",
      "<|vision_end|>",
      "<|vision_pad|>",
      "<|image_pad|>",
      "<|video_pad|>",
      "<tool_call>",
      "</tool_call>",
      "<|fim_prefix|>",
      "<|fim_middle|>",
      "<|fim_suffix|>",
      "<|fim_pad|>",
      "<|repo_name|>",
      "<|file_sep|>",
      "<tool_response>",
      "</tool_response>",
      "<think>",
      "</think>",
      "<|audio_start|>",
      "<|audio_end|>",
      "<tts_pad>",
      "<tts_text_bos>",
      "<tts_text_eod>",
      "<tts_text_bos_single>",
      "<|audio_pad|>",
  };
  return kTokens;
}

namespace {

// The converter's rule (model-spec §2.5): CONTROL if HF marks the token special or it looks like
// <|…|>. The Qwen tokenizer marks the tool, tool-response and think tags not special.
text::TokenType special_type(std::string_view token) {
  const bool looks_special = token.starts_with("<|") && token.ends_with("|>");
  const bool plain_tag = token == "<tool_call>" || token == "</tool_call>" || token == "<tool_response>" ||
                         token == "</tool_response>" || token == "<think>" || token == "</think>";
  return looks_special || !plain_tag ? text::TokenType::kControl : text::TokenType::kUserDefined;
}

}  // namespace

text::Vocab builtin_vocab(int64_t vocab_size) {
  const auto& specials = qwen_special_tokens();
  const auto fixed = static_cast<int64_t>(256 + specials.size());
  if (vocab_size < fixed) {
    fail(ErrorKind::kInput, "synth: vocab = {} cannot hold the 256 byte tokens and {} special tokens",
         vocab_size, specials.size());
  }
  BpeModel bpe = train_bpe(builtin_corpus(), static_cast<size_t>(vocab_size) - specials.size());

  text::Vocab vocab;
  vocab.tokens = std::move(bpe.tokens);
  vocab.merges = std::move(bpe.merges);
  vocab.types.assign(vocab.tokens.size(), text::TokenType::kNormal);
  for (const std::string_view token : specials) {
    if (token == "<|im_end|>") vocab.eos_id = static_cast<uint32_t>(vocab.tokens.size());
    if (token == "<|endoftext|>") vocab.pad_id = static_cast<uint32_t>(vocab.tokens.size());
    vocab.tokens.emplace_back(token);
    vocab.types.push_back(special_type(token));
  }
  pad_vocab(vocab, vocab_size);
  vocab.add_bos = false;
  vocab.pre = text::PreTokenizer::kQwen35;
  vocab.chat_template = std::string(builtin_chat_template());
  return vocab;
}

void pad_vocab(text::Vocab& vocab, int64_t size) {
  if (static_cast<int64_t>(vocab.tokens.size()) > size) {
    fail(ErrorKind::kInput, "synth: the tokenizer has {} tokens, more than vocab = {}", vocab.tokens.size(),
         size);
  }
  while (static_cast<int64_t>(vocab.tokens.size()) < size) {
    vocab.tokens.push_back(fmt::format("[PAD{}]", vocab.tokens.size()));
    vocab.types.push_back(text::TokenType::kUnused);
  }
}

text::Vocab import_vocab_files(const std::string& tokenizer_path, const std::string* config_path) {
  const auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(ErrorKind::kIo, "synth: cannot read '{}'", path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string tokenizer = read(tokenizer_path);
  std::string config;
  if (config_path != nullptr) config = read(*config_path);
  text::Vocab vocab = text::import_hf_tokenizer(tokenizer, config_path != nullptr ? &config : nullptr);
  if (vocab.chat_template.empty()) vocab.chat_template = std::string(builtin_chat_template());
  return vocab;
}

}  // namespace tern::tools
