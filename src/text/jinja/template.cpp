#include "text/jinja/template.h"

#include <map>

#include "core/error.h"
#include "text/jinja/builtins.h"
#include "text/jinja/parser.h"

namespace tern::text::jinja {
namespace {

// Bounds that keep a hostile template or request from exhausting the stack or memory.
constexpr int kMaxCallDepth = 64;
constexpr size_t kMaxOutputBytes = size_t{256} << 20;

// A variable scope: the template root, a macro call or one loop iteration. `if` blocks share their
// enclosing scope, as in jinja2.
struct Scope {
  std::map<std::string, Value, std::less<>> variables;
  Scope* parent = nullptr;
};

enum class Flow { kNormal, kBreak, kContinue };

class Renderer {
 public:
  explicit Renderer(const ValueDict& context) : context_(context) {}

  void render_body(const Body& body, Scope& scope, std::string& out) {
    if (execute(body, scope, out) != Flow::kNormal)
      fail(ErrorKind::kInternal, "chat template: break/continue escaped its loop");
  }

 private:
  Value lookup(const std::string& name, const Scope& scope, int line) const {
    for (const Scope* s = &scope; s; s = s->parent) {
      const auto it = s->variables.find(name);
      if (it != s->variables.end()) return it->second;
    }
    if (const Value* found = find_key(context_, name)) return *found;
    if (is_known_global(name)) return global_function(name);
    (void)line;
    return Value::undefined(fmt::format("'{}' is undefined", name));
  }

  Flow execute(const Body& body, Scope& scope, std::string& out) {
    for (const auto& stmt : body) {
      const Flow flow = execute(*stmt, scope, out);
      if (flow != Flow::kNormal) return flow;
      if (out.size() > kMaxOutputBytes)
        fail(ErrorKind::kCapacity, "chat template: rendered prompt exceeds {} bytes", kMaxOutputBytes);
    }
    return Flow::kNormal;
  }

  Flow execute(const Stmt& stmt, Scope& scope, std::string& out) {
    switch (stmt.kind) {
      case Stmt::Kind::kText:
        out += stmt.text;
        return Flow::kNormal;
      case Stmt::Kind::kOutput:
        out += to_python_str(evaluate(*stmt.expr, scope));
        return Flow::kNormal;
      case Stmt::Kind::kIf:
        for (const auto& [condition, body] : stmt.branches)
          if (!condition || evaluate(*condition, scope).truthy()) return execute(body, scope, out);
        return Flow::kNormal;
      case Stmt::Kind::kFor:
        execute_for(stmt, scope, out);
        return Flow::kNormal;
      case Stmt::Kind::kSet:
        execute_set(stmt, scope);
        return Flow::kNormal;
      case Stmt::Kind::kSetBlock: {
        std::string captured;
        render_body(stmt.body, scope, captured);
        scope.variables[stmt.targets[0]] = Value::string(std::move(captured));
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro:
        scope.variables[stmt.name] = make_macro(stmt, scope);
        return Flow::kNormal;
      case Stmt::Kind::kBreak:
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        return Flow::kContinue;
      case Stmt::Kind::kGeneration:
        return execute(stmt.body, scope, out);
    }
    return Flow::kNormal;
  }

  static void assign(Scope& scope, const std::vector<std::string>& targets, const Value& value, int line) {
    if (targets.size() == 1) {
      scope.variables[targets[0]] = value;
      return;
    }
    const ValueList items = iterate(value, line);
    if (items.size() != targets.size())
      fail(ErrorKind::kInput, "chat template line {}: cannot unpack {} values into {} names", line,
           items.size(), targets.size());
    for (size_t i = 0; i < targets.size(); ++i) scope.variables[targets[i]] = items[i];
  }

  void execute_set(const Stmt& stmt, Scope& scope) {
    const Value value = evaluate(*stmt.expr, scope);
    if (stmt.attribute.empty()) {
      assign(scope, stmt.targets, value, stmt.line);
      return;
    }
    const Value object = lookup(stmt.targets[0], scope, stmt.line);
    if (!object.is_namespace())
      fail(ErrorKind::kInput, "chat template line {}: cannot assign attribute on non-namespace object",
           stmt.line);
    ValueDict& attributes = object.as_namespace().attributes;
    for (auto& [key, existing] : attributes)
      if (key == stmt.attribute) {
        existing = value;
        return;
      }
    attributes.emplace_back(stmt.attribute, value);
  }

  void execute_for(const Stmt& stmt, Scope& scope, std::string& out) {
    ValueList items = iterate(evaluate(*stmt.expr, scope), stmt.line);
    if (stmt.filter) {
      ValueList kept;
      for (const Value& item : items) {
        Scope probe{{}, &scope};
        assign(probe, stmt.targets, item, stmt.line);
        if (evaluate(*stmt.filter, probe).truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      render_body(stmt.else_body, scope, out);
      return;
    }
    const auto length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      const auto index = static_cast<size_t>(i);
      ValueDict loop = {
          {"index", Value::integer(i + 1)},
          {"index0", Value::integer(i)},
          {"revindex", Value::integer(length - i)},
          {"revindex0", Value::integer(length - i - 1)},
          {"first", Value::boolean(i == 0)},
          {"last", Value::boolean(i == length - 1)},
          {"length", Value::integer(length)},
          {"depth", Value::integer(1)},
          {"depth0", Value::integer(0)},
          {"previtem", i > 0 ? items[index - 1] : Value::undefined("there is no previous item")},
          {"nextitem", i + 1 < length ? items[index + 1] : Value::undefined("there is no next item")},
      };
      Scope iteration{{}, &scope};
      iteration.variables["loop"] = Value::dict(std::move(loop));
      assign(iteration, stmt.targets, items[index], stmt.line);
      if (execute(stmt.body, iteration, out) == Flow::kBreak) break;
    }
  }

  Value make_macro(const Stmt& stmt, Scope& scope) {
    Scope* root = &scope;
    while (root->parent) root = root->parent;
    return Value::callable(stmt.name, [this, &stmt, root](CallArgs& args) {
      if (args.positional.size() > stmt.params.size())
        fail(ErrorKind::kInput, "chat template line {}: macro '{}' takes not more than {} argument(s)",
             stmt.line, stmt.name, stmt.params.size());
      if (++depth_ > kMaxCallDepth)
        fail(ErrorKind::kCapacity, "chat template line {}: macro calls nested deeper than {}", stmt.line,
             kMaxCallDepth);
      Scope call{{}, root};
      for (size_t i = 0; i < stmt.params.size(); ++i) {
        const MacroParam& param = stmt.params[i];
        if (i < args.positional.size()) {
          call.variables[param.name] = args.positional[i];
          continue;
        }
        const auto keyword = std::find_if(args.keyword.begin(), args.keyword.end(),
                                          [&](const auto& kv) { return kv.first == param.name; });
        if (keyword != args.keyword.end())
          call.variables[param.name] = keyword->second;
        else if (param.default_value)
          call.variables[param.name] = evaluate(*param.default_value, call);
        else
          call.variables[param.name] =
              Value::undefined(fmt::format("parameter '{}' was not provided", param.name));
      }
      for (const auto& [key, value] : args.keyword)
        if (std::none_of(stmt.params.begin(), stmt.params.end(),
                         [&](const MacroParam& p) { return p.name == key; }))
          fail(ErrorKind::kInput, "chat template line {}: macro '{}' takes no keyword argument '{}'",
               stmt.line, stmt.name, key);
      std::string out;
      render_body(stmt.body, call, out);
      --depth_;
      return Value::string(std::move(out));
    });
  }

  CallArgs evaluate_arguments(const Expr& expr, Scope& scope, size_t first_positional) {
    CallArgs args;
    for (size_t i = first_positional; i < expr.children.size(); ++i)
      args.positional.push_back(evaluate(*expr.children[i], scope));
    for (const auto& [name, value] : expr.keywords) args.keyword.emplace_back(name, evaluate(*value, scope));
    return args;
  }

  Value evaluate(const Expr& expr, Scope& scope) {
    const int line = expr.line;
    switch (expr.kind) {
      case Expr::Kind::kLiteral:
        return expr.literal;
      case Expr::Kind::kName:
        return lookup(expr.name, scope, line);
      case Expr::Kind::kList: {
        ValueList items;
        for (const auto& child : expr.children) items.push_back(evaluate(*child, scope));
        return Value::list(std::move(items));
      }
      case Expr::Kind::kDict: {
        ValueDict items;
        for (size_t i = 0; i + 1 < expr.children.size(); i += 2) {
          const Value key = evaluate(*expr.children[i], scope);
          if (!key.is_string())
            fail(ErrorKind::kUnsupported, "chat template line {}: dict keys must be strings", line);
          Value value = evaluate(*expr.children[i + 1], scope);
          auto existing = std::find_if(items.begin(), items.end(),
                                       [&](const auto& kv) { return kv.first == key.as_string(); });
          if (existing != items.end())
            existing->second = std::move(value);
          else
            items.emplace_back(key.as_string(), std::move(value));
        }
        return Value::dict(std::move(items));
      }
      case Expr::Kind::kAttr:
        return get_attribute(evaluate(*expr.children[0], scope), expr.name, line);
      case Expr::Kind::kItem:
        return get_item(evaluate(*expr.children[0], scope), evaluate(*expr.children[1], scope), line);
      case Expr::Kind::kSlice: {
        const auto part = [&](size_t i) {
          return expr.children[i] ? evaluate(*expr.children[i], scope) : Value::none();
        };
        return slice_value(part(0), part(1), part(2), part(3), line);
      }
      case Expr::Kind::kCall: {
        const Value callee = evaluate(*expr.children[0], scope);
        CallArgs args = evaluate_arguments(expr, scope, 1);
        if (callee.is_undefined()) fail_undefined(callee, line);
        if (!callee.is_callable())
          fail(ErrorKind::kInput, "chat template line {}: '{}' object is not callable", line,
               callee.type_name());
        return callee.as_callable().invoke(args);
      }
      case Expr::Kind::kFilter: {
        const Value operand = evaluate(*expr.children[0], scope);
        CallArgs args = evaluate_arguments(expr, scope, 1);
        return apply_filter(expr.name, operand, args, line);
      }
      case Expr::Kind::kTest: {
        const Value operand = evaluate(*expr.children[0], scope);
        CallArgs args = evaluate_arguments(expr, scope, 1);
        return Value::boolean(apply_test(expr.name, operand, args, line) != expr.negated);
      }
      case Expr::Kind::kUnary: {
        const Value operand = evaluate(*expr.children[0], scope);
        if (expr.name == "not") return Value::boolean(!operand.truthy());
        if (operand.is_undefined()) fail_undefined(operand, line);
        if (operand.is_int() || operand.is_bool()) {
          const int64_t i = operand.is_bool() ? operand.as_bool() : operand.as_int();
          return Value::integer(expr.name == "-" ? -i : i);
        }
        if (operand.is_float())
          return Value::floating(expr.name == "-" ? -operand.as_float() : operand.as_float());
        fail(ErrorKind::kInput, "chat template line {}: bad operand type for unary {}: '{}'", line, expr.name,
             operand.type_name());
      }
      case Expr::Kind::kBinary:
        return binary_operation(expr.name, evaluate(*expr.children[0], scope),
                                evaluate(*expr.children[1], scope), line);
      case Expr::Kind::kCompare: {
        Value left = evaluate(*expr.children[0], scope);
        for (size_t i = 0; i < expr.ops.size(); ++i) {
          Value right = evaluate(*expr.children[i + 1], scope);
          if (!compare_values(expr.ops[i], left, right, line)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::kAnd: {
        Value left = evaluate(*expr.children[0], scope);
        return left.truthy() ? evaluate(*expr.children[1], scope) : left;
      }
      case Expr::Kind::kOr: {
        Value left = evaluate(*expr.children[0], scope);
        return left.truthy() ? left : evaluate(*expr.children[1], scope);
      }
      case Expr::Kind::kCondition:
        if (evaluate(*expr.children[0], scope).truthy()) return evaluate(*expr.children[1], scope);
        if (expr.children.size() > 2) return evaluate(*expr.children[2], scope);
        return Value::undefined(
            "the inline if-expression evaluated to false and no else section was defined");
    }
    fail(ErrorKind::kInternal, "chat template line {}: unknown expression kind", line);
  }

  const ValueDict& context_;
  int depth_ = 0;
};

}  // namespace

Template::Template(std::string_view source) : body_(parse_template(source)) {}

std::string Template::render(const ValueDict& variables) const {
  Renderer renderer(variables);
  Scope root;
  std::string out;
  renderer.render_body(body_, root, out);
  return out;
}

}  // namespace tern::text::jinja
