// Template source → tokens, with jinja2's whitespace rules as Hugging Face configures them
// (trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False) and `-`/`+` tag modifiers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tern::text::jinja {

enum class TokenKind {
  kText,        // literal template data, whitespace control already applied
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,  // value holds the unescaped bytes
  kInteger,
  kFloat,
  kOperator,  // value holds the operator text: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string value;
  int line;
};

// Throws Error(kUnsupported) naming the line for what the lexer cannot read (unclosed tags,
// unterminated strings, raw blocks, unknown characters).
std::vector<Token> tokenize(std::string_view source);

}  // namespace tern::text::jinja
