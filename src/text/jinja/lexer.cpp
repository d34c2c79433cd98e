#include "text/jinja/lexer.h"

#include <cctype>

#include "core/error.h"
#include "text/jinja/py_string.h"

namespace tern::text::jinja {
namespace {

// jinja2 normalises every newline sequence in template data and string literals to "\n".
std::string normalize_newlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

// Length of the UTF-8 sequence starting with `lead` (1 for bytes that cannot start one).
size_t sequence_length(unsigned char lead) {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

// Byte length of the Python-whitespace code point at `pos`, or 0 if there is none.
size_t whitespace_at(std::string_view text, size_t pos) {
  const size_t n = sequence_length(static_cast<unsigned char>(text[pos]));
  if (pos + n > text.size()) return 0;
  const std::u32string code_point = utf8_decode(text.substr(pos, n), "chat template");
  return code_point.size() == 1 && python_isspace(code_point[0]) ? n : 0;
}

// Python's str.rstrip(): trailing whitespace in the Unicode sense.
std::string_view rstrip_whitespace(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80 && end - start < 4) --start;
    if (whitespace_at(text, start) != end - start) break;
    end = start;
  }
  return text.substr(0, end);
}

size_t skip_whitespace(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    const size_t n = whitespace_at(text, pos);
    if (n == 0) break;
    pos += n;
  }
  return pos;
}

bool only_spaces(std::string_view text) {
  return !text.empty() && skip_whitespace(text, 0) == text.size();
}

class Lexer {
 public:
  // jinja2 reads the source with every newline sequence as "\n" and, with keep_trailing_newline
  // off, without one final newline.
  explicit Lexer(std::string_view source) : normalized_(normalize_newlines(source)) {
    if (!normalized_.empty() && normalized_.back() == '\n') normalized_.pop_back();
    source_ = normalized_;
  }

  std::vector<Token> run() {
    size_t pos = 0;
    while (pos < source_.size()) {
      const size_t open = find_tag_open(pos);
      std::string_view text = source_.substr(pos, open - pos);
      if (open == source_.size()) {
        emit_text(text, pos);
        break;
      }
      const char kind = source_[open + 1];
      const char modifier = open + 2 < source_.size() ? source_[open + 2] : '\0';
      if (modifier == '-') {
        text = rstrip_whitespace(text);
      } else if (modifier != '+' && kind != '{') {
        // lstrip_blocks: spaces between the start of the line and a block or comment tag go.
        const size_t line_start = text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1;
        const bool at_line_start = line_start > 0 || pos == 0 || source_[pos - 1] == '\n';
        if (at_line_start && only_spaces(text.substr(line_start))) text = text.substr(0, line_start);
      }
      emit_text(text, pos);
      size_t inner = open + 2 + (modifier == '-' || modifier == '+' ? 1 : 0);
      if (kind == '#')
        pos = end_comment(inner);
      else if (kind == '{')
        pos = lex_tag(inner, TokenKind::kVarBegin, TokenKind::kVarEnd, '}');
      else
        pos = lex_tag(inner, TokenKind::kBlockBegin, TokenKind::kBlockEnd, '%');
    }
    tokens_.push_back({TokenKind::kEnd, "", line_at(source_.size())});
    return std::move(tokens_);
  }

 private:
  int line_at(size_t pos) {
    while (line_pos_ < pos && line_pos_ < source_.size()) {
      if (source_[line_pos_] == '\n') ++line_;
      ++line_pos_;
    }
    return line_;
  }

  size_t find_tag_open(size_t pos) const {
    while (true) {
      const size_t brace = source_.find('{', pos);
      if (brace == std::string_view::npos || brace + 1 >= source_.size()) return source_.size();
      const char next = source_[brace + 1];
      if (next == '{' || next == '%' || next == '#') return brace;
      pos = brace + 1;
    }
  }

  void emit_text(std::string_view text, size_t pos) {
    if (!text.empty()) tokens_.push_back({TokenKind::kText, std::string(text), line_at(pos)});
  }

  // Whitespace after a closing tag: `-` strips all of it; trim_blocks drops one newline after %} and #}.
  size_t after_close(size_t pos, bool minus, bool plus, bool is_block) {
    if (minus) return skip_whitespace(source_, pos);
    if (is_block && !plus && pos < source_.size() && source_[pos] == '\n') return pos + 1;
    return pos;
  }

  size_t end_comment(size_t pos) {
    const size_t close = source_.find("#}", pos);
    if (close == std::string_view::npos)
      fail(ErrorKind::kUnsupported, "chat template line {}: unclosed comment", line_at(pos));
    const bool minus = close > pos && source_[close - 1] == '-';
    const bool plus = close > pos && source_[close - 1] == '+';
    return after_close(close + 2, minus, plus, true);
  }

  size_t lex_tag(size_t pos, TokenKind begin, TokenKind end, char close_char) {
    const int tag_line = line_at(pos);
    tokens_.push_back({begin, "", tag_line});
    int open_brackets = 0;  // as in jinja2, "}}" inside ( [ { does not close the tag
    while (true) {
      while (pos < source_.size() && std::isspace(static_cast<unsigned char>(source_[pos]))) ++pos;
      if (pos >= source_.size())
        fail(ErrorKind::kUnsupported, "chat template line {}: tag is never closed", tag_line);
      const bool minus = source_[pos] == '-' || source_[pos] == '+';
      const size_t close_at = minus ? pos + 1 : pos;
      if (open_brackets == 0 && source_.compare(close_at, 2, std::string{close_char, '}'}) == 0) {
        tokens_.push_back({end, "", line_at(pos)});
        return after_close(close_at + 2, source_[pos] == '-', source_[pos] == '+',
                           end == TokenKind::kBlockEnd);
      }
      pos = lex_expression_token(pos);
      const Token& token = tokens_.back();
      if (token.kind == TokenKind::kOperator) {
        if (token.value == "(" || token.value == "[" || token.value == "{") ++open_brackets;
        if ((token.value == ")" || token.value == "]" || token.value == "}") && open_brackets > 0)
          --open_brackets;
      }
    }
  }

  size_t lex_expression_token(size_t pos) {
    const int line = line_at(pos);
    const char c = source_[pos];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos;
      while (end < source_.size() &&
             (std::isalnum(static_cast<unsigned char>(source_[end])) || source_[end] == '_'))
        ++end;
      tokens_.push_back({TokenKind::kName, std::string(source_.substr(pos, end - pos)), line});
      return end;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return lex_number(pos, line);
    if (c == '\'' || c == '"') return lex_string(pos, line);
    static constexpr std::string_view kTwoCharOps[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const std::string_view op : kTwoCharOps) {
      if (source_.compare(pos, 2, op) == 0) {
        tokens_.push_back({TokenKind::kOperator, std::string(op), line});
        return pos + 2;
      }
    }
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) != std::string_view::npos) {
      tokens_.push_back({TokenKind::kOperator, std::string(1, c), line});
      return pos + 1;
    }
    fail(ErrorKind::kUnsupported, "chat template line {}: unexpected character '{}'", line, c);
  }

  size_t lex_number(size_t pos, int line) {
    size_t end = pos;
    const auto digits = [&] {
      while (end < source_.size() &&
             (std::isdigit(static_cast<unsigned char>(source_[end])) || source_[end] == '_'))
        ++end;
    };
    digits();
    bool is_float = false;
    if (end + 1 < source_.size() && source_[end] == '.' &&
        std::isdigit(static_cast<unsigned char>(source_[end + 1]))) {
      is_float = true;
      ++end;
      digits();
    }
    if (end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      size_t exp = end + 1;
      if (exp < source_.size() && (source_[exp] == '+' || source_[exp] == '-')) ++exp;
      if (exp < source_.size() && std::isdigit(static_cast<unsigned char>(source_[exp]))) {
        is_float = true;
        end = exp;
        digits();
      }
    }
    std::string text;
    for (size_t i = pos; i < end; ++i)
      if (source_[i] != '_') text += source_[i];
    tokens_.push_back({is_float ? TokenKind::kFloat : TokenKind::kInteger, text, line});
    return end;
  }

  // Python unicode-escape decoding, as jinja2 applies to string literals.
  size_t lex_string(size_t pos, int line) {
    const char quote = source_[pos];
    std::string value;
    size_t i = pos + 1;
    while (true) {
      if (i >= source_.size())
        fail(ErrorKind::kUnsupported, "chat template line {}: unterminated string", line);
      const char c = source_[i];
      if (c == quote) break;
      if (c != '\\' || i + 1 >= source_.size()) {
        value += c;
        ++i;
        continue;
      }
      const char e = source_[i + 1];
      i += 2;
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '\n':
          break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + width > source_.size())
            fail(ErrorKind::kUnsupported, "chat template line {}: truncated \\{} escape", line, e);
          char32_t code_point = 0;
          for (size_t k = 0; k < width; ++k) {
            const int digit = std::isxdigit(static_cast<unsigned char>(source_[i + k]))
                                  ? std::stoi(std::string(1, source_[i + k]), nullptr, 16)
                                  : -1;
            if (digit < 0) fail(ErrorKind::kUnsupported, "chat template line {}: bad \\{} escape", line, e);
            code_point = code_point * 16 + static_cast<char32_t>(digit);
          }
          if (code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff))
            fail(ErrorKind::kUnsupported, "chat template line {}: \\{} escape is not a code point", line, e);
          value += utf8_encode(std::u32string_view(&code_point, 1));
          i += width;
          break;
        }
        default:
          if (e >= '0' && e <= '7')
            fail(ErrorKind::kUnsupported, "chat template line {}: octal escapes are not supported", line);
          value += '\\';
          value += e;
      }
    }
    tokens_.push_back({TokenKind::kString, value, line});
    return i + 1;
  }

  std::string normalized_;
  std::string_view source_;
  std::vector<Token> tokens_;
  size_t line_pos_ = 0;
  int line_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  return Lexer(source).run();
}

}  // namespace tern::text::jinja
