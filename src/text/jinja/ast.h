// Syntax tree of a parsed template. Expressions and statements carry their source line so that
// errors at render time can name it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace tern::text::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // literal
    kName,     // name
    kList,     // children: items
    kDict,     // children: key, value, key, value, ...
    kAttr,     // children[0].name
    kItem,     // children[0][children[1]]
    kSlice,    // children[0][children[1]:children[2]:children[3]], null parts omitted
    kCall,     // children[0](children[1..], keywords)
    kFilter,   // children[0] | name(children[1..], keywords)
    kTest,     // children[0] is [not] name(children[1..])
    kUnary,    // name ("-", "+", "not") children[0]
    kBinary,   // children[0] name children[1], for + - * / // % ** ~
    kCompare,  // children[0] ops[0] children[1] ops[1] children[2] ... (Python chaining)
    kAnd,
    kOr,
    kCondition,  // children[1] if children[0] else children[2] (else optional)
  };
  Kind kind;
  int line = 0;
  Value literal;
  std::string name;
  std::vector<ExprPtr> children;  // null entries stand for omitted slice parts
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  std::vector<std::string> ops;
  bool negated = false;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt {
  enum class Kind {
    kText,      // text
    kOutput,    // {{ expr }}
    kIf,        // branches: (condition or null for else, body)
    kFor,       // for targets in expr [if filter]: body [else else_body]
    kSet,       // set targets = expr, or set targets[0].attribute = expr
    kSetBlock,  // set targets[0] %}body{% endset
    kMacro,     // macro name(params): body
    kBreak,
    kContinue,
    kGeneration,  // HF's {% generation %}: renders its body unchanged
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::string> targets;
  std::string attribute;
  ExprPtr filter;
  Body body;
  Body else_body;
  std::string name;
  std::vector<MacroParam> params;
};

}  // namespace tern::text::jinja
