#include "text/tokenizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <bit>

#include "core/error.h"
#include "text/pretokenizer.h"
#include "text/utf8.h"

namespace tern::text {

namespace {

// GPT-2's byte -> code point table (model-spec §7.1): printable bytes map to themselves, the other 68
// bytes, in order, to U+0100 onwards (space -> U+0120 'Ġ', newline -> U+010A 'Ċ').
std::array<char32_t, 256> byte_to_code_point() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

std::string encode_code_point(char32_t cp) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

// The bytes a byte-level token string stands for; false if it contains a code point outside the table.
bool byte_level_decode(std::string_view text, const std::unordered_map<char32_t, uint8_t>& inverse,
                       std::string& out) {
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                                    static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    if (n <= 0) return false;
    auto it = inverse.find(static_cast<char32_t>(cp));
    if (it == inverse.end()) return false;
    out.push_back(static_cast<char>(it->second));
    i += static_cast<size_t>(n);
  }
  return true;
}

uint64_t hash_pair(uint64_t pair) {
  return (pair * 0x9E3779B97F4A7C15ULL) >> 17;
}

// Clears the word cache when it holds this many pieces, bounding its memory.
constexpr size_t kMaxCachedPieces = 1 << 16;
// Pieces longer than this are not cached: they are rare, and caching them would let memory grow.
constexpr size_t kMaxCachedPieceBytes = 256;

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  if (vocab_.types.size() != vocab_.tokens.size()) {
    fail(ErrorKind::kFormat, "tokenizer: {} tokens but {} token types", vocab_.tokens.size(),
         vocab_.types.size());
  }
  if (vocab_.tokens.size() >= (size_t{1} << 31)) fail(ErrorKind::kFormat, "tokenizer: vocabulary too large");
  const auto table = byte_to_code_point();
  std::unordered_map<char32_t, uint8_t> inverse;
  for (int b = 0; b < 256; ++b) inverse.emplace(table[b], static_cast<uint8_t>(b));

  byte_token_.fill(-1);
  std::unordered_map<std::string, int32_t> single_byte;
  for (int b = 0; b < 256; ++b) single_byte.emplace(encode_code_point(table[b]), b);

  token_bytes_.resize(vocab_.tokens.size());
  for (size_t id = 0; id < vocab_.tokens.size(); ++id) {
    const std::string& text = vocab_.tokens[id];
    switch (vocab_.types[id]) {
      case TokenType::kNormal:
      case TokenType::kByte:
        if (!byte_level_decode(text, inverse, token_bytes_[id])) {
          fail(ErrorKind::kFormat, "tokenizer: token {} '{}' is not byte-level text", id, text);
        }
        if (auto it = single_byte.find(text); it != single_byte.end() && byte_token_[it->second] < 0) {
          byte_token_[it->second] = static_cast<int32_t>(id);
        }
        break;
      case TokenType::kControl:
      case TokenType::kUserDefined:
        token_bytes_[id] = text;
        break;
      case TokenType::kUnknown:
      case TokenType::kUnused:
        break;
    }
  }
  for (int b = 0; b < 256; ++b) {
    if (byte_token_[b] < 0) fail(ErrorKind::kFormat, "tokenizer: byte 0x{:02X} has no token", b);
  }
  build_merges();
  build_added_tokens();
}

void Tokenizer::build_merges() {
  std::unordered_map<std::string_view, int32_t> ids;
  ids.reserve(vocab_.tokens.size());
  for (size_t id = 0; id < vocab_.tokens.size(); ++id) {
    if (vocab_.types[id] == TokenType::kNormal) ids.emplace(vocab_.tokens[id], static_cast<int32_t>(id));
  }
  const size_t capacity = std::bit_ceil(std::max<size_t>(16, vocab_.merges.size() * 2));
  merge_table_.assign(capacity, Merge{});
  merge_mask_ = capacity - 1;
  std::string joined;
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    const auto& [left, right] = vocab_.merges[rank];
    joined = left + right;
    auto l = ids.find(left), r = ids.find(right), m = ids.find(joined);
    if (l == ids.end() || r == ids.end() || m == ids.end()) {
      fail(ErrorKind::kFormat, "tokenizer: merge {} '{} {}' does not join two tokens into a token", rank,
           left, right);
    }
    const uint64_t pair = (uint64_t(uint32_t(l->second)) << 32) | uint32_t(r->second);
    uint64_t slot = hash_pair(pair) & merge_mask_;
    while (merge_table_[slot].pair != kEmptyPair && merge_table_[slot].pair != pair)
      slot = (slot + 1) & merge_mask_;
    // A repeated merge keeps its first (lowest) rank.
    if (merge_table_[slot].pair == kEmptyPair)
      merge_table_[slot] = {pair, static_cast<int32_t>(rank), m->second};
  }
}

const Tokenizer::Merge* Tokenizer::find_merge(int32_t left, int32_t right) const {
  const uint64_t pair = (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
  uint64_t slot = hash_pair(pair) & merge_mask_;
  while (true) {
    const Merge& m = merge_table_[slot];
    if (m.pair == pair) return &m;
    if (m.pair == kEmptyPair) return nullptr;
    slot = (slot + 1) & merge_mask_;
  }
}

void Tokenizer::build_added_tokens() {
  trie_.assign(1, TrieNode{});
  for (size_t id = 0; id < vocab_.tokens.size(); ++id) {
    const TokenType type = vocab_.types[id];
    if (type != TokenType::kControl && type != TokenType::kUserDefined) continue;
    const std::string& text = vocab_.tokens[id];
    if (text.empty()) continue;
    added_first_byte_[static_cast<uint8_t>(text[0])] = true;
    int32_t node = 0;
    for (char c : text) {
      const auto byte = static_cast<uint8_t>(c);
      auto& children = trie_[node].children;
      auto it =
          std::find_if(children.begin(), children.end(), [&](const auto& ch) { return ch.first == byte; });
      if (it != children.end()) {
        node = it->second;
      } else {
        const auto child = static_cast<int32_t>(trie_.size());
        children.emplace_back(byte, child);
        trie_.push_back(TrieNode{});
        node = child;
      }
    }
    // Two added tokens with the same text: the first id wins.
    if (trie_[node].token < 0) trie_[node].token = static_cast<int32_t>(id);
  }
}

size_t Tokenizer::match_added(std::string_view text, size_t pos, bool parse_special, int32_t& id) const {
  size_t best = 0;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto byte = static_cast<uint8_t>(text[i]);
    const auto& children = trie_[node].children;
    auto it =
        std::find_if(children.begin(), children.end(), [&](const auto& ch) { return ch.first == byte; });
    if (it == children.end()) break;
    node = it->second;
    const int32_t token = trie_[node].token;
    if (token >= 0 && (parse_special || vocab_.types[token] != TokenType::kControl)) {
      best = i + 1 - pos;
      id = token;
    }
  }
  return best;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parse_special) const {
  check_utf8(text, "text to tokenize");
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  std::lock_guard lock(cache_mutex_);
  size_t plain_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (!added_first_byte_[static_cast<uint8_t>(text[pos])]) {
      ++pos;
      continue;
    }
    int32_t id = -1;
    const size_t len = match_added(text, pos, parse_special, id);
    if (len == 0) {
      ++pos;
      continue;
    }
    encode_plain(text.substr(plain_start, pos - plain_start), ids);
    ids.push_back(id);
    pos += len;
    plain_start = pos;
  }
  encode_plain(text.substr(plain_start), ids);
  return ids;
}

void Tokenizer::encode_plain(std::string_view text, std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  thread_local std::string normalized;
  thread_local std::vector<std::string_view> pieces;
  normalized.clear();
  append_nfc(text, normalized);
  pieces.clear();
  pre_tokenize(vocab_.pre, normalized, pieces);
  for (std::string_view piece : pieces) encode_piece(piece, ids);
}

void Tokenizer::encode_piece(std::string_view piece, std::vector<int32_t>& ids) const {
  if (piece.size() == 1) {
    ids.push_back(byte_token_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (piece.size() > kMaxCachedPieceBytes) {
    bpe(piece, ids);
    return;
  }
  if (auto it = cache_.find(piece); it != cache_.end()) {
    ids.insert(ids.end(), it->second.begin(), it->second.end());
    return;
  }
  const size_t first = ids.size();
  bpe(piece, ids);
  if (cache_.size() >= kMaxCachedPieces) cache_.clear();
  cache_.emplace(std::string(piece),
                 std::vector<int32_t>(ids.begin() + static_cast<ptrdiff_t>(first), ids.end()));
}

// Rank-ordered BPE over a linked list of symbols with a min-heap of candidate merges keyed by (rank,
// position): O(n log n) in the piece length. Ties at equal rank go to the leftmost pair, as in HF.
void Tokenizer::bpe(std::string_view piece, std::vector<int32_t>& ids) const {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t left;
    int32_t right;
    int32_t merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  const auto n = static_cast<int32_t>(piece.size());
  symbols.resize(piece.size());
  heap.clear();
  for (int32_t i = 0; i < n; ++i) {
    symbols[i] = {byte_token_[static_cast<uint8_t>(piece[i])], i - 1, i + 1 < n ? i + 1 : -1};
  }
  auto consider = [&](int32_t pos) {
    const int32_t next = symbols[pos].next;
    if (next < 0) return;
    if (const Merge* m = find_merge(symbols[pos].id, symbols[next].id)) {
      heap.push_back({m->rank, pos, symbols[pos].id, symbols[next].id, m->merged});
      std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& sym = symbols[top.pos];
    // Skip entries made stale by an earlier merge: the symbol or its neighbour changed.
    if (sym.id != top.left || sym.next < 0 || symbols[sym.next].id != top.right) continue;
    const int32_t gone = sym.next;
    sym.id = top.merged;
    sym.next = symbols[gone].next;
    symbols[gone].id = -1;
    if (sym.next >= 0) symbols[sym.next].prev = top.pos;
    if (sym.prev >= 0) consider(sym.prev);
    consider(top.pos);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= token_bytes_.size()) {
    fail(ErrorKind::kInput, "token id {} is outside the vocabulary (0..{})", id, token_bytes_.size() - 1);
  }
  return token_bytes_[id];
}

TokenType Tokenizer::token_type(int32_t id) const {
  token_bytes(id);
  return vocab_.types[id];
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  for (int32_t id : ids) {
    const std::string& bytes = token_bytes(id);
    if (!render_special && vocab_.types[id] == TokenType::kControl) continue;
    out += bytes;
  }
  return out;
}

}  // namespace tern::text
