#include "text/jinja/parser.h"

#include <charconv>
#include <cstdlib>
#include <set>

#include "core/error.h"
#include "text/jinja/builtins.h"
#include "text/jinja/lexer.h"

namespace tern::text::jinja {
namespace {

// Nesting bound for statements and expressions, so a hostile template cannot overflow the stack.
constexpr int kMaxNesting = 256;

ExprPtr make_expr(Expr::Kind kind, int line) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->line = line;
  return expr;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse() {
    Body body = parse_body({});
    if (peek().kind != TokenKind::kEnd)
      fail(ErrorKind::kUnsupported, "chat template line {}: unexpected '{{% {} %}}'", peek().line,
           peek_tag());
    for (const auto& [name, line] : called_names_)
      if (!is_known_global(name) && !macro_names_.count(name))
        fail(ErrorKind::kUnsupported, "chat template line {}: unsupported function '{}'", line, name);
    return body;
  }

 private:
  struct NestingGuard {
    explicit NestingGuard(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting)
        fail(ErrorKind::kUnsupported, "chat template line {}: nesting deeper than {}", parser_.peek().line,
             kMaxNesting);
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;
    Parser& parser_;
  };

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  bool at_operator(std::string_view op) const {
    return peek().kind == TokenKind::kOperator && peek().value == op;
  }
  bool at_name(std::string_view name) const {
    return peek().kind == TokenKind::kName && peek().value == name;
  }
  bool skip_operator(std::string_view op) {
    if (!at_operator(op)) return false;
    next();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!at_name(name)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail_here(std::string_view what) const {
    const TokenKind kind = peek().kind;
    const std::string found = kind == TokenKind::kEnd        ? "end of template"
                              : kind == TokenKind::kVarEnd   ? "'}}'"
                              : kind == TokenKind::kBlockEnd ? "'%}'"
                              : kind == TokenKind::kText     ? "template text"
                                                             : "'" + peek().value + "'";
    fail(ErrorKind::kUnsupported, "chat template line {}: expected {}, found {}", peek().line, what, found);
  }
  void expect_operator(std::string_view op) {
    if (!skip_operator(op)) fail_here(fmt::format("'{}'", op));
  }
  std::string expect_name() {
    if (peek().kind != TokenKind::kName) fail_here("a name");
    return next().value;
  }
  void expect_block_end() {
    if (peek().kind != TokenKind::kBlockEnd) fail_here("'%}'");
    next();
  }
  // The tag name of a {% ... %} that starts at the current token.
  std::string peek_tag() const { return peek(1).kind == TokenKind::kName ? peek(1).value : ""; }

  // Statements until a {% tag %} whose name is in `end_tags` (left unread) or the end of the tokens.
  Body parse_body(const std::set<std::string_view>& end_tags) {
    Body body;
    while (peek().kind != TokenKind::kEnd) {
      const Token& token = peek();
      if (token.kind == TokenKind::kText) {
        auto stmt = std::make_unique<Stmt>();
        stmt->kind = Stmt::Kind::kText;
        stmt->line = token.line;
        stmt->text = token.value;
        body.push_back(std::move(stmt));
        next();
      } else if (token.kind == TokenKind::kVarBegin) {
        next();
        auto stmt = std::make_unique<Stmt>();
        stmt->kind = Stmt::Kind::kOutput;
        stmt->line = token.line;
        stmt->expr = parse_tuple(true);
        if (peek().kind != TokenKind::kVarEnd) fail_here("'}}'");
        next();
        body.push_back(std::move(stmt));
      } else {
        if (end_tags.count(peek_tag())) return body;
        body.push_back(parse_statement());
      }
    }
    return body;
  }

  std::unique_ptr<Stmt> parse_statement() {
    const NestingGuard guard(*this);
    const int line = next().line;  // {%
    const std::string tag = expect_name();
    auto stmt = std::make_unique<Stmt>();
    stmt->line = line;
    if (tag == "if") {
      stmt->kind = Stmt::Kind::kIf;
      parse_if(*stmt);
    } else if (tag == "for") {
      stmt->kind = Stmt::Kind::kFor;
      parse_for(*stmt);
    } else if (tag == "set") {
      parse_set(*stmt);
    } else if (tag == "macro") {
      stmt->kind = Stmt::Kind::kMacro;
      parse_macro(*stmt);
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0)
        fail(ErrorKind::kUnsupported, "chat template line {}: '{}' outside a loop", line, tag);
      stmt->kind = tag == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue;
      expect_block_end();
    } else if (tag == "generation") {
      stmt->kind = Stmt::Kind::kGeneration;
      expect_block_end();
      stmt->body = parse_body({"endgeneration"});
      end_tag("endgeneration", line);
    } else {
      fail(ErrorKind::kUnsupported, "chat template line {}: unsupported tag '{{% {} %}}'", line, tag);
    }
    return stmt;
  }

  // Reads {% name %}; `opened` is the line of the statement it closes.
  void end_tag(std::string_view name, int opened) {
    if (peek().kind != TokenKind::kBlockBegin || peek_tag() != name)
      fail(ErrorKind::kUnsupported, "chat template line {}: missing '{{% {} %}}'", opened, name);
    next();
    next();
    expect_block_end();
  }

  void parse_if(Stmt& stmt) {
    ExprPtr condition = parse_tuple(true);
    expect_block_end();
    while (true) {
      Body body = parse_body({"elif", "else", "endif"});
      stmt.branches.emplace_back(std::move(condition), std::move(body));
      if (peek().kind != TokenKind::kBlockBegin)
        fail(ErrorKind::kUnsupported, "chat template line {}: missing '{{% endif %}}'", stmt.line);
      const std::string tag = peek_tag();
      next();
      next();
      if (tag == "elif") {
        condition = parse_tuple(true);
        expect_block_end();
      } else if (tag == "else") {
        expect_block_end();
        stmt.branches.emplace_back(nullptr, parse_body({"endif"}));
        end_tag("endif", stmt.line);
        return;
      } else {
        expect_block_end();
        return;
      }
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> targets;
    const bool parenthesized = skip_operator("(");
    do {
      targets.push_back(expect_name());
    } while (skip_operator(","));
    if (parenthesized) expect_operator(")");
    return targets;
  }

  void parse_for(Stmt& stmt) {
    stmt.targets = parse_targets();
    if (!skip_name("in")) fail_here("'in'");
    stmt.expr = parse_tuple(false);
    if (skip_name("if")) stmt.filter = parse_expression(false);
    if (at_name("recursive"))
      fail(ErrorKind::kUnsupported, "chat template line {}: unsupported 'recursive' loop", stmt.line);
    expect_block_end();
    ++loop_depth_;
    stmt.body = parse_body({"else", "endfor"});
    --loop_depth_;
    if (peek().kind == TokenKind::kBlockBegin && peek_tag() == "else") {
      next();
      next();
      expect_block_end();
      stmt.else_body = parse_body({"endfor"});
    }
    end_tag("endfor", stmt.line);
  }

  void parse_set(Stmt& stmt) {
    const std::string first = expect_name();
    if (skip_operator(".")) {
      stmt.targets = {first};
      stmt.attribute = expect_name();
    } else {
      stmt.targets = {first};
      while (skip_operator(",")) stmt.targets.push_back(expect_name());
    }
    if (peek().kind == TokenKind::kBlockEnd && stmt.attribute.empty() && stmt.targets.size() == 1) {
      next();
      stmt.kind = Stmt::Kind::kSetBlock;
      stmt.body = parse_body({"endset"});
      end_tag("endset", stmt.line);
      return;
    }
    stmt.kind = Stmt::Kind::kSet;
    expect_operator("=");
    stmt.expr = parse_tuple(true);
    expect_block_end();
  }

  void parse_macro(Stmt& stmt) {
    stmt.name = expect_name();
    macro_names_.insert(stmt.name);
    expect_operator("(");
    while (!skip_operator(")")) {
      MacroParam param;
      param.name = expect_name();
      if (skip_operator("=")) param.default_value = parse_expression(true);
      stmt.params.push_back(std::move(param));
      if (!at_operator(")")) expect_operator(",");
    }
    expect_block_end();
    const int saved_depth = loop_depth_;
    loop_depth_ = 0;
    stmt.body = parse_body({"endmacro"});
    loop_depth_ = saved_depth;
    end_tag("endmacro", stmt.line);
  }

  // A comma-separated sequence without brackets is a tuple (rendered as a list).
  ExprPtr parse_tuple(bool with_condition) {
    const int line = peek().line;
    ExprPtr first = parse_expression(with_condition);
    if (!at_operator(",")) return first;
    auto tuple = make_expr(Expr::Kind::kList, line);
    tuple->children.push_back(std::move(first));
    while (skip_operator(",")) {
      if (peek().kind == TokenKind::kVarEnd || peek().kind == TokenKind::kBlockEnd) break;
      tuple->children.push_back(parse_expression(with_condition));
    }
    return tuple;
  }

  ExprPtr parse_expression(bool with_condition) {
    ExprPtr expr = parse_or();
    if (!with_condition) return expr;
    while (at_name("if")) {
      const int line = next().line;
      auto condition = make_expr(Expr::Kind::kCondition, line);
      condition->children.push_back(parse_or());
      condition->children.push_back(std::move(expr));
      if (skip_name("else")) condition->children.push_back(parse_expression(true));
      expr = std::move(condition);
    }
    return expr;
  }

  ExprPtr parse_binary_chain(Expr::Kind kind, std::string_view keyword, ExprPtr (Parser::*operand)()) {
    ExprPtr left = (this->*operand)();
    while (at_name(keyword)) {
      const int line = next().line;
      auto node = make_expr(kind, line);
      node->children.push_back(std::move(left));
      node->children.push_back((this->*operand)());
      left = std::move(node);
    }
    return left;
  }

  ExprPtr parse_or() { return parse_binary_chain(Expr::Kind::kOr, "or", &Parser::parse_and); }
  ExprPtr parse_and() { return parse_binary_chain(Expr::Kind::kAnd, "and", &Parser::parse_not); }

  ExprPtr parse_not() {
    const NestingGuard guard(*this);
    if (at_name("not")) {
      const int line = next().line;
      auto node = make_expr(Expr::Kind::kUnary, line);
      node->name = "not";
      node->children.push_back(parse_not());
      return node;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = peek().line;
    ExprPtr first = parse_math1();
    ExprPtr node;
    while (true) {
      std::string op;
      if (peek().kind == TokenKind::kOperator &&
          (peek().value == "==" || peek().value == "!=" || peek().value == "<" || peek().value == "<=" ||
           peek().value == ">" || peek().value == ">=")) {
        op = next().value;
      } else if (skip_name("in")) {
        op = "in";
      } else if (at_name("not") && peek(1).kind == TokenKind::kName && peek(1).value == "in") {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      if (!node) {
        node = make_expr(Expr::Kind::kCompare, line);
        node->children.push_back(std::move(first));
      }
      node->ops.push_back(op);
      node->children.push_back(parse_math1());
    }
    return node ? std::move(node) : std::move(first);
  }

  ExprPtr parse_operators(std::initializer_list<std::string_view> ops, ExprPtr (Parser::*operand)()) {
    ExprPtr left = (this->*operand)();
    while (peek().kind == TokenKind::kOperator) {
      bool matched = false;
      for (const std::string_view op : ops) matched = matched || peek().value == op;
      if (!matched) break;
      const Token& token = next();
      auto node = make_expr(Expr::Kind::kBinary, token.line);
      node->name = token.value;
      node->children.push_back(std::move(left));
      node->children.push_back((this->*operand)());
      left = std::move(node);
    }
    return left;
  }

  ExprPtr parse_math1() { return parse_operators({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_operators({"~"}, &Parser::parse_math2); }
  ExprPtr parse_math2() { return parse_operators({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return parse_operators({"**"}, &Parser::parse_unary_with_filters); }
  ExprPtr parse_unary_with_filters() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filters) {
    const NestingGuard guard(*this);
    ExprPtr node;
    if (at_operator("-") || at_operator("+")) {
      const Token& token = next();
      node = make_expr(Expr::Kind::kUnary, token.line);
      node->name = token.value;
      node->children.push_back(parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    return with_filters ? parse_filters(std::move(node)) : std::move(node);
  }

  ExprPtr parse_primary() {
    const NestingGuard guard(*this);
    const Token& token = peek();
    const int line = token.line;
    if (token.kind == TokenKind::kName) {
      next();
      auto node = make_expr(Expr::Kind::kLiteral, line);
      if (token.value == "true" || token.value == "True")
        node->literal = Value::boolean(true);
      else if (token.value == "false" || token.value == "False")
        node->literal = Value::boolean(false);
      else if (token.value == "none" || token.value == "None")
        node->literal = Value::none();
      else {
        node->kind = Expr::Kind::kName;
        node->name = token.value;
      }
      return node;
    }
    if (token.kind == TokenKind::kString) {
      std::string text;
      while (peek().kind == TokenKind::kString) text += next().value;
      auto node = make_expr(Expr::Kind::kLiteral, line);
      node->literal = Value::string(std::move(text));
      return node;
    }
    if (token.kind == TokenKind::kInteger) {
      next();
      int64_t value = 0;
      const auto result = std::from_chars(token.value.data(), token.value.data() + token.value.size(), value);
      if (result.ec != std::errc())
        fail(ErrorKind::kUnsupported, "chat template line {}: integer {} is out of range", line, token.value);
      auto node = make_expr(Expr::Kind::kLiteral, line);
      node->literal = Value::integer(value);
      return node;
    }
    if (token.kind == TokenKind::kFloat) {
      next();
      auto node = make_expr(Expr::Kind::kLiteral, line);
      node->literal = Value::floating(std::strtod(token.value.c_str(), nullptr));
      return node;
    }
    if (skip_operator("(")) {
      if (skip_operator(")")) return make_expr(Expr::Kind::kList, line);
      ExprPtr inner = parse_tuple(true);
      expect_operator(")");
      return inner;
    }
    if (skip_operator("[")) {
      auto node = make_expr(Expr::Kind::kList, line);
      while (!skip_operator("]")) {
        node->children.push_back(parse_expression(true));
        if (!at_operator("]")) expect_operator(",");
      }
      return node;
    }
    if (skip_operator("{")) {
      auto node = make_expr(Expr::Kind::kDict, line);
      while (!skip_operator("}")) {
        node->children.push_back(parse_expression(true));
        expect_operator(":");
        node->children.push_back(parse_expression(true));
        if (!at_operator("}")) expect_operator(",");
      }
      return node;
    }
    fail_here("an expression");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (at_operator(".")) {
        const int line = next().line;
        if (peek().kind == TokenKind::kInteger) {
          auto item = make_expr(Expr::Kind::kItem, line);
          item->children.push_back(std::move(node));
          item->children.push_back(parse_primary());
          node = std::move(item);
          continue;
        }
        auto attr = make_expr(Expr::Kind::kAttr, line);
        attr->name = expect_name();
        attr->children.push_back(std::move(node));
        node = std::move(attr);
      } else if (at_operator("[")) {
        node = parse_subscript(std::move(node));
      } else if (at_operator("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object) {
    const int line = next().line;  // [
    ExprPtr start;
    if (!at_operator(":")) {
      start = parse_expression(true);
      if (skip_operator("]")) {
        auto item = make_expr(Expr::Kind::kItem, line);
        item->children.push_back(std::move(object));
        item->children.push_back(std::move(start));
        return item;
      }
    }
    auto slice = make_expr(Expr::Kind::kSlice, line);
    slice->children.push_back(std::move(object));
    slice->children.push_back(std::move(start));
    expect_operator(":");
    slice->children.push_back(at_operator(":") || at_operator("]") ? nullptr : parse_expression(true));
    ExprPtr step;
    if (skip_operator(":") && !at_operator("]")) step = parse_expression(true);
    slice->children.push_back(std::move(step));
    expect_operator("]");
    return slice;
  }

  // Arguments in parentheses, appended to node->children / node->keywords.
  void parse_arguments(Expr& node) {
    expect_operator("(");
    while (!skip_operator(")")) {
      if (at_operator("*") || at_operator("**"))
        fail(ErrorKind::kUnsupported, "chat template line {}: unsupported *args/**kwargs in a call",
             peek().line);
      if (peek().kind == TokenKind::kName && peek(1).kind == TokenKind::kOperator && peek(1).value == "=") {
        std::string name = next().value;
        next();
        node.keywords.emplace_back(std::move(name), parse_expression(true));
      } else {
        if (!node.keywords.empty())
          fail(ErrorKind::kUnsupported, "chat template line {}: positional argument after keyword argument",
               peek().line);
        node.children.push_back(parse_expression(true));
      }
      if (!at_operator(")")) expect_operator(",");
    }
  }

  ExprPtr parse_call(ExprPtr callee) {
    const int line = peek().line;
    if (callee->kind == Expr::Kind::kAttr && !is_known_method(callee->name))
      fail(ErrorKind::kUnsupported, "chat template line {}: unsupported method '{}'", line, callee->name);
    if (callee->kind == Expr::Kind::kName) called_names_.emplace_back(callee->name, line);
    auto call = make_expr(Expr::Kind::kCall, line);
    call->children.push_back(std::move(callee));
    parse_arguments(*call);
    return call;
  }

  ExprPtr parse_filters(ExprPtr node) {
    while (true) {
      if (skip_operator("|")) {
        const int line = peek().line;
        auto filter = make_expr(Expr::Kind::kFilter, line);
        filter->name = expect_name();
        if (at_operator(".") || !is_known_filter(filter->name))
          fail(ErrorKind::kUnsupported, "chat template line {}: unsupported filter '{}'", line, filter->name);
        filter->children.push_back(std::move(node));
        if (at_operator("(")) parse_arguments(*filter);
        node = std::move(filter);
      } else if (at_name("is")) {
        const int line = next().line;
        auto test = make_expr(Expr::Kind::kTest, line);
        test->negated = skip_name("not");
        test->name = expect_name();
        if (at_operator(".") || !is_known_test(test->name))
          fail(ErrorKind::kUnsupported, "chat template line {}: unsupported test '{}'", line, test->name);
        test->children.push_back(std::move(node));
        if (at_operator("(")) {
          parse_arguments(*test);
        } else if (takes_bare_test_argument()) {
          test->children.push_back(parse_postfix(parse_primary()));
        }
        node = std::move(test);
      } else if (at_operator("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  // jinja2 lets a test take one argument without parentheses: `x is divisibleby 3`.
  bool takes_bare_test_argument() const {
    const Token& token = peek();
    if (token.kind == TokenKind::kName)
      return token.value != "else" && token.value != "or" && token.value != "and" && token.value != "is";
    return token.kind == TokenKind::kString || token.kind == TokenKind::kInteger ||
           token.kind == TokenKind::kFloat || at_operator("[") || at_operator("{");
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
  int nesting_ = 0;
  std::set<std::string, std::less<>> macro_names_;
  std::vector<std::pair<std::string, int>> called_names_;
};

}  // namespace

Body parse_template(std::string_view source) {
  return Parser(tokenize(source)).parse();
}

}  // namespace tern::text::jinja
