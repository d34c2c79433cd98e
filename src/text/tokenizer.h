// Byte-level BPE tokenizer over a Vocab (model-spec §7.1-§7.3, §11.5): added tokens split out first by
// longest match, NFC on the rest, the §7.2 pre-tokenizer, the GPT-2 byte map, merges by rank. Matches
// HF tokenizers id for id. Decoding is the inverse byte map.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/vocab.h"

namespace tern::text {

class Tokenizer {
 public:
  // Throws Error(kFormat) if the vocabulary is inconsistent: a merge whose parts or result are not
  // tokens, a byte with no token, a NORMAL token that is not byte-level text.
  explicit Tokenizer(Vocab vocab);

  // Token ids of `text` (valid UTF-8, else Error(kInput)). CONTROL tokens spelled in the text are parsed
  // as such when `parse_special` (model-spec §11.5), USER_DEFINED ones always. Never adds a BOS: callers
  // prepend bos_id() when add_bos() says so. Thread-safe.
  std::vector<int32_t> encode(std::string_view text, bool parse_special = true) const;

  // Concatenated bytes of the tokens (may end inside a UTF-8 sequence); CONTROL tokens are skipped
  // unless `render_special`. Throws Error(kInput) for an id outside the vocabulary.
  std::string decode(std::span<const int32_t> ids, bool render_special = true) const;

  // The bytes a token stands for (empty for UNUSED padding). Throws Error(kInput) if out of range.
  const std::string& token_bytes(int32_t id) const;
  TokenType token_type(int32_t id) const;

  size_t size() const { return vocab_.tokens.size(); }
  const Vocab& vocab() const { return vocab_; }
  bool add_bos() const { return vocab_.add_bos && vocab_.bos_id.has_value(); }

 private:
  struct Merge {
    uint64_t pair = kEmptyPair;  // left id << 32 | right id
    int32_t rank = 0;
    int32_t merged = 0;
  };
  static constexpr uint64_t kEmptyPair = ~uint64_t{0};

  // A trie over the bytes of the added tokens.
  struct TrieNode {
    std::vector<std::pair<uint8_t, int32_t>> children;
    int32_t token = -1;
  };

  void build_merges();
  void build_added_tokens();
  const Merge* find_merge(int32_t left, int32_t right) const;
  // Longest added token at text[pos...] (CONTROL only if parse_special): its length, or 0.
  size_t match_added(std::string_view text, size_t pos, bool parse_special, int32_t& id) const;
  // Appends the ids of NFC text between added tokens.
  void encode_plain(std::string_view text, std::vector<int32_t>& ids) const;
  // Appends the BPE ids of one pre-tokenized piece.
  void encode_piece(std::string_view piece, std::vector<int32_t>& ids) const;
  void bpe(std::string_view piece, std::vector<int32_t>& ids) const;

  Vocab vocab_;
  std::vector<std::string> token_bytes_;
  std::array<int32_t, 256> byte_token_{};
  std::vector<Merge> merge_table_;  // open addressing, size a power of two
  uint64_t merge_mask_ = 0;
  std::vector<TrieNode> trie_;
  std::array<bool, 256> added_first_byte_{};

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace tern::text
