#include "text/pretokenizer.h"

#include <utf8proc.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace tern::text {

namespace {

constexpr std::string_view kQwen35Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

struct CodePointRange {
  char32_t first;
  char32_t last;
};
#include "text/unicode_classes.inc"

// Classes of every code point as a two-stage table: 256-code-point blocks, identical blocks shared.
class ClassTable {
 public:
  ClassTable() {
    std::string flat(kCodePoints, '\0');
    auto mark = [&](const auto& ranges, uint8_t bit) {
      for (const CodePointRange& r : ranges) {
        for (char32_t cp = r.first; cp <= r.last; ++cp) flat[cp] = static_cast<char>(flat[cp] | bit);
      }
    };
    mark(kLetterRanges, kClassLetter);
    mark(kMarkRanges, kClassMark);
    mark(kNumberRanges, kClassNumber);
    for (char32_t cp = 0; cp < kCodePoints; ++cp) {
      if (is_white_space(cp)) flat[cp] = static_cast<char>(flat[cp] | kClassSpace);
      if (cp == '\r' || cp == '\n') flat[cp] = static_cast<char>(flat[cp] | kClassNewline);
    }
    std::map<std::string, uint16_t> seen;
    for (size_t block = 0; block < kCodePoints / kBlock; ++block) {
      std::string bytes = flat.substr(block * kBlock, kBlock);
      auto [it, added] = seen.emplace(bytes, static_cast<uint16_t>(blocks_.size() / kBlock));
      if (added) blocks_.insert(blocks_.end(), bytes.begin(), bytes.end());
      index_[block] = it->second;
    }
  }
  uint8_t operator()(char32_t cp) const {
    if (cp >= kCodePoints) return 0;
    return blocks_[size_t{index_[cp / kBlock]} * kBlock + cp % kBlock];
  }

 private:
  static constexpr char32_t kCodePoints = 0x110000;
  static constexpr size_t kBlock = 256;
  std::array<uint16_t, kCodePoints / kBlock> index_{};
  std::vector<uint8_t> blocks_;
};

const ClassTable kClassTable;

uint8_t classify(char32_t cp) {
  return kClassTable(cp);
}

const std::array<uint8_t, 128> kAsciiClass = [] {
  std::array<uint8_t, 128> table{};
  for (char32_t cp = 0; cp < 128; ++cp) table[cp] = classify(cp);
  return table;
}();

// One code point of the input: its class and where it starts in the text.
struct Unit {
  char32_t cp;
  uint32_t offset;
  uint8_t cls;
};

// Decodes valid UTF-8 (the caller validated it) into units plus a sentinel holding text.size().
void decode(std::string_view text, std::vector<Unit>& units) {
  units.clear();
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<uint8_t>(text[i]);
    if (lead < 0x80) {
      units.push_back({lead, static_cast<uint32_t>(i), kAsciiClass[lead]});
      ++i;
      continue;
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                                                static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    const char32_t code = n > 0 ? static_cast<char32_t>(cp) : 0xFFFD;
    units.push_back({code, static_cast<uint32_t>(i), classify(code)});
    i += n > 0 ? static_cast<size_t>(n) : 1;
  }
  units.push_back({0, static_cast<uint32_t>(text.size()), 0});
}

char32_t fold_ascii(char32_t cp) {
  return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at i (units[i] is an apostrophe): the length matched, or 0. Under Unicode
// case folding only U+017F (long s) folds onto one of these ASCII letters besides their capitals.
size_t match_contraction(const std::vector<Unit>& u, size_t i, size_t n) {
  auto letter = [&](size_t k) -> char32_t {
    if (k >= n) return 0;
    return u[k].cp == 0x17F ? 's' : fold_ascii(u[k].cp);
  };
  const char32_t first = letter(i + 1);
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  const char32_t second = letter(i + 2);
  if ((first == 'r' || first == 'v') && second == 'e') return 3;
  if (first == 'l' && second == 'l') return 3;
  return 0;
}

// Length of the longest match of the regex at units[i] (i < n); always at least 1.
size_t match_at(const std::vector<Unit>& u, size_t i, size_t n, uint8_t word_class) {
  const uint8_t cls = u[i].cls;
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (u[i].cp == '\'') {
    if (size_t len = match_contraction(u, i, n)) return len;
  }
  // [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+  (qwen2: \p{L}+)
  // A code point outside the word class that may be the prefix is taken as one; then a word must follow
  // (the sentinel u[n] has no class, so a prefix at the end fails).
  size_t start = i;
  if (!(cls & (word_class | kClassNewline | kClassLetter | kClassNumber))) start = i + 1;
  if (u[start].cls & word_class) {
    size_t j = start + 1;
    while (j < n && (u[j].cls & word_class)) ++j;
    return j - i;
  }
  // \p{N}
  if (cls & kClassNumber) return 1;
  // ' ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*'  (qwen2: [^\s\p{L}\p{N}])
  const uint8_t not_punct = kClassSpace | kClassLetter | kClassNumber | (word_class & kClassMark);
  start = (u[i].cp == ' ' && i + 1 < n && !(u[i + 1].cls & not_punct)) ? i + 1 : i;
  if (!(u[start].cls & not_punct)) {
    size_t j = start + 1;
    while (j < n && !(u[j].cls & not_punct)) ++j;
    while (j < n && (u[j].cls & kClassNewline)) ++j;
    return j - i;
  }
  // Every remaining code point is \s. The three whitespace alternatives all start from the run [i, end).
  size_t end = i + 1;
  size_t last_newline = (cls & kClassNewline) ? i + 1 : 0;
  while (end < n && (u[end].cls & kClassSpace)) {
    if (u[end].cls & kClassNewline) last_newline = end + 1;
    ++end;
  }
  // \s*[\r\n]+ : \s* gives back characters until the run ends in a newline.
  if (last_newline != 0) return last_newline - i;
  // \s+(?!\S) : at the end of the text the whole run; else the run less its last character, if any.
  if (end == n) return end - i;
  if (end - i >= 2) return end - 1 - i;
  // \s+
  return end - i;
}

}  // namespace

std::string_view pre_tokenizer_regex(PreTokenizer pre) {
  return pre == PreTokenizer::kQwen35 ? kQwen35Regex : kQwen2Regex;
}

uint8_t char_class(char32_t cp) {
  return cp < 128 ? kAsciiClass[cp] : classify(cp);
}

void pre_tokenize(PreTokenizer pre, std::string_view text, std::vector<std::string_view>& pieces) {
  thread_local std::vector<Unit> units;
  decode(text, units);
  const size_t n = units.size() - 1;
  const uint8_t word_class = pre == PreTokenizer::kQwen35 ? (kClassLetter | kClassMark) : kClassLetter;
  size_t i = 0;
  while (i < n) {
    const size_t len = match_at(units, i, n, word_class);
    pieces.push_back(text.substr(units[i].offset, units[i + len].offset - units[i].offset));
    i += len;
  }
}

}  // namespace tern::text
