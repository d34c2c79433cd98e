#include "text/jinja/builtins.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>

#include "core/error.h"
#include "text/jinja/py_string.h"

namespace tern::text::jinja {
namespace {

constexpr std::array kFilters = {"length",     "count",      "tojson", "trim",   "items",  "join",
                                 "default",    "d",          "first",  "last",   "upper",  "lower",
                                 "replace",    "string",     "int",    "float",  "list",   "map",
                                 "selectattr", "rejectattr", "unique", "safe",   "escape", "e",
                                 "abs",        "capitalize", "title",  "reverse"};
constexpr std::array kTests = {"defined",     "undefined", "none",    "string", "mapping", "sequence",
                               "iterable",    "number",    "integer", "float",  "boolean", "true",
                               "false",       "callable",  "equalto", "eq",     "ne",      "lt",
                               "le",          "gt",        "ge",      "in",     "odd",     "even",
                               "divisibleby", "lower",     "upper",   "sameas"};
constexpr std::array kMethods = {"startswith", "endswith", "split", "rsplit", "strip", "lstrip",
                                 "rstrip",     "replace",  "upper", "lower",  "title", "capitalize",
                                 "find",       "count",    "get",   "items",  "keys",  "values"};
constexpr std::array kGlobals = {"raise_exception", "namespace", "range", "strftime_now", "dict"};

template <size_t N>
bool contains(const std::array<const char*, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

[[noreturn]] void fail_type(int line, const std::string& what) {
  fail(ErrorKind::kInput, "chat template line {}: {}", line, what);
}

// Positional-or-keyword argument `index`/`name` of a call, or null when absent.
const Value* argument(CallArgs& args, size_t index, std::string_view name) {
  if (index < args.positional.size()) return &args.positional[index];
  for (const auto& [key, value] : args.keyword)
    if (key == name) return &value;
  return nullptr;
}

void check_arity(CallArgs& args, size_t max_args, std::initializer_list<std::string_view> keywords,
                 const std::string& what, int line) {
  if (args.positional.size() > max_args)
    fail_type(line, fmt::format("{} takes at most {} arguments", what, max_args));
  for (const auto& [key, value] : args.keyword)
    if (std::find(keywords.begin(), keywords.end(), key) == keywords.end())
      fail_type(line, fmt::format("{} got an unexpected keyword argument '{}'", what, key));
}

const std::string& require_string(const Value* value, const std::string& what, int line) {
  if (!value || !value->is_string()) fail_type(line, fmt::format("{} needs a string argument", what));
  return value->as_string();
}

int64_t require_int(const Value* value, const std::string& what, int line) {
  if (!value || !(value->is_int() || value->is_bool()))
    fail_type(line, fmt::format("{} needs an integer argument", what));
  return value->is_bool() ? value->as_bool() : value->as_int();
}

Value make_string_list(const std::vector<std::string>& parts) {
  ValueList items;
  for (const auto& part : parts) items.push_back(Value::string(part));
  return Value::list(std::move(items));
}

// startswith/endswith accept a string or a tuple (list) of strings.
bool affix_matches(const std::string& text, const Value& affix, bool at_start, int line) {
  const auto one = [&](const Value& candidate) {
    const std::string& s = require_string(&candidate, at_start ? "startswith" : "endswith", line);
    if (s.size() > text.size()) return false;
    return at_start ? text.compare(0, s.size(), s) == 0
                    : text.compare(text.size() - s.size(), s.size(), s) == 0;
  };
  if (affix.is_list()) return std::any_of(affix.as_list().begin(), affix.as_list().end(), one);
  return one(affix);
}

Value string_method(const std::string& text, const std::string& name, CallArgs& args, int line) {
  const std::string what = "str." + name + "()";
  if (name == "startswith" || name == "endswith") {
    check_arity(args, 1, {}, what, line);
    const Value* affix = argument(args, 0, "");
    if (!affix) fail_type(line, what + " takes one argument");
    return Value::boolean(affix_matches(text, *affix, name == "startswith", line));
  }
  if (name == "split" || name == "rsplit") {
    check_arity(args, 2, {"sep", "maxsplit"}, what, line);
    const Value* sep = argument(args, 0, "sep");
    const Value* maxsplit = argument(args, 1, "maxsplit");
    const std::string* separator = sep && !sep->is_none() ? &require_string(sep, what, line) : nullptr;
    return make_string_list(
        python_split(text, separator, maxsplit ? require_int(maxsplit, what, line) : -1, name == "rsplit"));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    check_arity(args, 1, {}, what, line);
    const Value* chars = argument(args, 0, "");
    const std::string* set = chars && !chars->is_none() ? &require_string(chars, what, line) : nullptr;
    return Value::string(python_strip(text, set, name != "rstrip", name != "lstrip"));
  }
  if (name == "replace") {
    check_arity(args, 3, {}, what, line);
    const Value* count = argument(args, 2, "");
    return Value::string(python_replace(text, require_string(argument(args, 0, ""), what, line),
                                        require_string(argument(args, 1, ""), what, line),
                                        count ? require_int(count, what, line) : -1));
  }
  if (name == "find" || name == "count") {
    check_arity(args, 1, {}, what, line);
    const std::string& needle = require_string(argument(args, 0, ""), what, line);
    if (name == "count") {
      if (needle.empty()) return Value::integer(static_cast<int64_t>(utf8_decode(text, "string").size()) + 1);
      int64_t n = 0;
      for (size_t pos = text.find(needle); pos != std::string::npos;
           pos = text.find(needle, pos + needle.size()))
        ++n;
      return Value::integer(n);
    }
    const size_t found = text.find(needle);
    if (found == std::string::npos) return Value::integer(-1);
    return Value::integer(static_cast<int64_t>(utf8_decode(text.substr(0, found), "string").size()));
  }
  check_arity(args, 0, {}, what, line);
  if (name == "upper") return Value::string(python_upper(text));
  if (name == "lower") return Value::string(python_lower(text));
  if (name == "title") return Value::string(python_title(text));
  if (name == "capitalize") return Value::string(python_capitalize(text));
  fail_type(line, fmt::format("'str' object has no attribute '{}'", name));
}

Value dict_method(const Value& dict, const std::string& name, CallArgs& args, int line) {
  const std::string what = "dict." + name + "()";
  if (name == "get") {
    check_arity(args, 2, {}, what, line);
    const Value* key = argument(args, 0, "");
    if (!key) fail_type(line, what + " takes a key");
    const Value* fallback = argument(args, 1, "");
    const Value* found = key->is_string() ? find_key(dict.as_dict(), key->as_string()) : nullptr;
    return found ? *found : fallback ? *fallback : Value::none();
  }
  check_arity(args, 0, {}, what, line);
  ValueList items;
  for (const auto& [key, value] : dict.as_dict()) {
    if (name == "items")
      items.push_back(Value::list({Value::string(key), value}));
    else if (name == "keys")
      items.push_back(Value::string(key));
    else
      items.push_back(value);
  }
  return Value::list(std::move(items));
}

bool is_method_of(const Value& object, const std::string& name) {
  static constexpr std::array kStringMethods = {"startswith", "endswith",   "split",   "rsplit", "strip",
                                                "lstrip",     "rstrip",     "replace", "upper",  "lower",
                                                "title",      "capitalize", "find",    "count"};
  static constexpr std::array kDictMethods = {"get", "items", "keys", "values"};
  if (object.is_string()) return contains(kStringMethods, name);
  if (object.is_dict()) return contains(kDictMethods, name);
  return false;
}

}  // namespace

bool is_known_filter(std::string_view name) {
  return contains(kFilters, name);
}
bool is_known_test(std::string_view name) {
  return contains(kTests, name);
}
bool is_known_method(std::string_view name) {
  return contains(kMethods, name);
}
bool is_known_global(std::string_view name) {
  return contains(kGlobals, name);
}

void fail_undefined(const Value& value, int line) {
  fail(ErrorKind::kInput, "chat template line {}: {}", line, value.undefined_message());
}

Value get_attribute(const Value& object, const std::string& name, int line) {
  if (object.is_undefined()) fail_undefined(object, line);
  if (is_method_of(object, name)) {
    return Value::callable(name, [object, name, line](CallArgs& args) {
      return object.is_string() ? string_method(object.as_string(), name, args, line)
                                : dict_method(object, name, args, line);
    });
  }
  if (object.is_dict()) {
    if (const Value* found = find_key(object.as_dict(), name)) return *found;
  } else if (object.is_namespace()) {
    if (const Value* found = find_key(object.as_namespace().attributes, name)) return *found;
  }
  return Value::undefined(fmt::format("'{} object' has no attribute '{}'", object.type_name(), name));
}

Value get_item(const Value& object, const Value& key, int line) {
  if (object.is_undefined()) fail_undefined(object, line);
  if (object.is_dict() && key.is_string()) {
    if (const Value* found = find_key(object.as_dict(), key.as_string())) return *found;
  }
  if ((object.is_list() || object.is_string()) && (key.is_int() || key.is_bool())) {
    const int64_t raw = key.is_bool() ? key.as_bool() : key.as_int();
    if (object.is_list()) {
      const auto size = static_cast<int64_t>(object.as_list().size());
      const int64_t index = raw < 0 ? raw + size : raw;
      if (index >= 0 && index < size) return object.as_list()[static_cast<size_t>(index)];
    } else {
      const std::u32string code_points = utf8_decode(object.as_string(), "string");
      const auto size = static_cast<int64_t>(code_points.size());
      const int64_t index = raw < 0 ? raw + size : raw;
      if (index >= 0 && index < size)
        return Value::string(
            utf8_encode(std::u32string_view(code_points).substr(static_cast<size_t>(index), 1)));
    }
  }
  if (key.is_string()) return get_attribute(object, key.as_string(), line);
  return Value::undefined(fmt::format("'{} object' has no item {}", object.type_name(), to_python_repr(key)));
}

ValueList iterate(const Value& value, int line) {
  if (value.is_undefined()) return {};
  if (value.is_list()) return value.as_list();
  if (value.is_dict()) {
    ValueList keys;
    for (const auto& [key, item] : value.as_dict()) keys.push_back(Value::string(key));
    return keys;
  }
  if (value.is_string()) {
    ValueList chars;
    for (const char32_t c : utf8_decode(value.as_string(), "string"))
      chars.push_back(Value::string(utf8_encode(std::u32string_view(&c, 1))));
    return chars;
  }
  fail_type(line, fmt::format("'{}' object is not iterable", value.type_name()));
}

Value slice_value(const Value& object, const Value& start, const Value& stop, const Value& step, int line) {
  const auto bound = [&](const Value& v) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    return require_int(&v, "slice", line);
  };
  const int64_t stride = bound(step).value_or(1);
  if (stride == 0) fail_type(line, "slice step cannot be zero");
  std::u32string code_points;
  size_t length = 0;
  if (object.is_list()) {
    length = object.as_list().size();
  } else if (object.is_string()) {
    code_points = utf8_decode(object.as_string(), "string");
    length = code_points.size();
  } else {
    if (object.is_undefined()) fail_undefined(object, line);
    fail_type(line, fmt::format("'{}' object is not subscriptable", object.type_name()));
  }
  const auto size = static_cast<int64_t>(length);
  // Python's slice.indices().
  const auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v < 0 ? *v + size : *v;
    if (stride > 0) return std::clamp<int64_t>(i, 0, size);
    return std::clamp<int64_t>(i, -1, size - 1);
  };
  const int64_t first = clamp(bound(start), stride > 0 ? 0 : size - 1);
  const int64_t last = clamp(bound(stop), stride > 0 ? size : -1);
  std::vector<size_t> picks;
  for (int64_t i = first; stride > 0 ? i < last : i > last; i += stride)
    picks.push_back(static_cast<size_t>(i));
  if (object.is_list()) {
    ValueList items;
    for (const size_t i : picks) items.push_back(object.as_list()[i]);
    return Value::list(std::move(items));
  }
  std::u32string out;
  for (const size_t i : picks) out += code_points[i];
  return Value::string(utf8_encode(out));
}

namespace {

int64_t as_integer(const Value& v) {
  return v.is_bool() ? v.as_bool() : v.as_int();
}

bool is_integral(const Value& v) {
  return v.is_int() || v.is_bool();
}

// Bound on one string or list built by an operator, so `'x' * 10**12` fails instead of allocating.
constexpr size_t kMaxValueSize = size_t{256} << 20;

void check_size(size_t size, int line) {
  if (size > kMaxValueSize)
    fail(ErrorKind::kCapacity, "chat template line {}: a value would exceed {} bytes or items", line,
         kMaxValueSize);
}

[[noreturn]] void fail_overflow(int line) {
  fail_type(line, "integer result beyond the 64-bit range tern supports");
}

Value repeat(const Value& sequence, int64_t times, int line) {
  times = std::max<int64_t>(times, 0);
  const size_t unit = sequence.is_string() ? sequence.as_string().size() : sequence.as_list().size();
  if (unit > 0 && static_cast<uint64_t>(times) > kMaxValueSize / unit) check_size(kMaxValueSize + 1, line);
  if (sequence.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += sequence.as_string();
    return Value::string(std::move(out));
  }
  ValueList out;
  for (int64_t i = 0; i < times; ++i)
    out.insert(out.end(), sequence.as_list().begin(), sequence.as_list().end());
  return Value::list(std::move(out));
}

}  // namespace

Value binary_operation(const std::string& op, const Value& left, const Value& right, int line) {
  if (op == "~") {
    std::string joined = to_python_str(left);
    joined += to_python_str(right);
    check_size(joined.size(), line);
    return Value::string(std::move(joined));
  }
  if (left.is_undefined()) fail_undefined(left, line);
  if (right.is_undefined()) fail_undefined(right, line);
  const auto type_error = [&]() -> Value {
    fail_type(line, fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, left.type_name(),
                                right.type_name()));
  };
  if (op == "+" && left.is_string() && right.is_string()) {
    // markupsafe: adding a plain string to Markup escapes the plain one.
    check_size(left.as_string().size() + right.as_string().size(), line);
    if (left.is_markup() || right.is_markup()) {
      const std::string a = left.is_markup() ? left.as_string() : html_escape(left.as_string());
      const std::string b = right.is_markup() ? right.as_string() : html_escape(right.as_string());
      return Value::string(a + b, true);
    }
    return Value::string(left.as_string() + right.as_string());
  }
  if (op == "+" && left.is_list() && right.is_list()) {
    check_size(left.as_list().size() + right.as_list().size(), line);
    ValueList items = left.as_list();
    items.insert(items.end(), right.as_list().begin(), right.as_list().end());
    return Value::list(std::move(items));
  }
  if (op == "*" && (left.is_string() || left.is_list()) && is_integral(right))
    return repeat(left, as_integer(right), line);
  if (op == "*" && (right.is_string() || right.is_list()) && is_integral(left))
    return repeat(right, as_integer(left), line);
  if (!left.is_number() || !right.is_number()) return type_error();
  if (is_integral(left) && is_integral(right)) {
    const int64_t a = as_integer(left);
    const int64_t b = as_integer(right);
    int64_t result = 0;
    if (op == "+") {
      if (__builtin_add_overflow(a, b, &result)) fail_overflow(line);
      return Value::integer(result);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(a, b, &result)) fail_overflow(line);
      return Value::integer(result);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(a, b, &result)) fail_overflow(line);
      return Value::integer(result);
    }
    if (op == "//" || op == "%") {
      if (b == 0) fail_type(line, "integer division or modulo by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1) fail_overflow(line);
      int64_t quotient = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --quotient;  // Python floors
      return Value::integer(op == "//" ? quotient : a - quotient * b);
    }
    if (op == "**" && b >= 0) {
      // Square and multiply; an overflowing square is an error only if it is still needed.
      result = 1;
      int64_t base = a;
      for (int64_t exponent = b; exponent > 0; exponent >>= 1) {
        if ((exponent & 1) && __builtin_mul_overflow(result, base, &result)) fail_overflow(line);
        if (exponent > 1 && __builtin_mul_overflow(base, base, &base)) fail_overflow(line);
      }
      return Value::integer(result);
    }
  }
  const double a = left.to_double();
  const double b = right.to_double();
  if (op == "+") return Value::floating(a + b);
  if (op == "-") return Value::floating(a - b);
  if (op == "*") return Value::floating(a * b);
  if (op == "/") {
    if (b == 0) fail_type(line, "division by zero");
    return Value::floating(a / b);
  }
  if (op == "//" || op == "%") {
    if (b == 0) fail_type(line, "float division or modulo by zero");
    const double mod = std::fmod(a, b);
    const double python_mod = (mod != 0 && ((mod < 0) != (b < 0))) ? mod + b : mod;
    if (op == "%") return Value::floating(python_mod);
    return Value::floating(std::round((a - python_mod) / b));
  }
  if (op == "**") return Value::floating(std::pow(a, b));
  return type_error();
}

namespace {

// Python <, for numbers, strings and lists (lexicographic).
bool less_than(const Value& a, const Value& b, int line) {
  if (a.is_number() && b.is_number()) {
    if (is_integral(a) && is_integral(b)) return as_integer(a) < as_integer(b);
    return a.to_double() < b.to_double();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order = code point order
  if (a.is_list() && b.is_list()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
      if (!values_equal(x[i], y[i])) return less_than(x[i], y[i], line);
    return x.size() < y.size();
  }
  if (a.is_undefined()) fail_undefined(a, line);
  if (b.is_undefined()) fail_undefined(b, line);
  fail_type(line, fmt::format("'<' not supported between instances of '{}' and '{}'", a.type_name(),
                              b.type_name()));
}

bool contains_value(const Value& container, const Value& item, int line) {
  if (container.is_string()) {
    if (!item.is_string())
      fail_type(line, fmt::format("'in <string>' requires string as left operand, not {}", item.type_name()));
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_list())
    return std::any_of(container.as_list().begin(), container.as_list().end(),
                       [&](const Value& v) { return values_equal(v, item); });
  if (container.is_dict())
    return item.is_string() && find_key(container.as_dict(), item.as_string()) != nullptr;
  if (container.is_undefined()) return false;  // Undefined iterates as empty
  fail_type(line, fmt::format("argument of type '{}' is not iterable", container.type_name()));
}

}  // namespace

bool compare_values(const std::string& op, const Value& left, const Value& right, int line) {
  if (op == "==") return values_equal(left, right);
  if (op == "!=") return !values_equal(left, right);
  if (op == "<") return less_than(left, right, line);
  if (op == ">") return less_than(right, left, line);
  if (op == "<=") return values_equal(left, right) || less_than(left, right, line);
  if (op == ">=") return values_equal(left, right) || less_than(right, left, line);
  if (op == "in") return contains_value(right, left, line);
  return !contains_value(right, left, line);  // "not in"
}

Value global_function(const std::string& name) {
  if (name == "raise_exception") {
    return Value::callable(name, [](CallArgs& args) -> Value {
      const Value* message = argument(args, 0, "message");
      fail(ErrorKind::kInput, "chat template raised: {}", message ? to_python_str(*message) : "");
    });
  }
  if (name == "namespace" || name == "dict") {
    const bool is_namespace = name == "namespace";
    return Value::callable(name, [is_namespace](CallArgs& args) {
      ValueDict attributes;
      const auto set = [&](const std::string& key, const Value& value) {
        for (auto& [k, v] : attributes)
          if (k == key) {
            v = value;
            return;
          }
        attributes.emplace_back(key, value);
      };
      for (const Value& mapping : args.positional) {
        if (!mapping.is_dict()) fail(ErrorKind::kInput, "chat template: namespace()/dict() takes mappings");
        for (const auto& [key, value] : mapping.as_dict()) set(key, value);
      }
      for (const auto& [key, value] : args.keyword) set(key, value);
      return is_namespace ? Value::namespace_object(std::move(attributes))
                          : Value::dict(std::move(attributes));
    });
  }
  if (name == "range") {
    return Value::callable(name, [](CallArgs& args) {
      std::vector<int64_t> bounds;
      for (const Value& v : args.positional) bounds.push_back(require_int(&v, "range()", 0));
      if (bounds.empty() || bounds.size() > 3 || !args.keyword.empty())
        fail(ErrorKind::kInput, "chat template: range() takes 1 to 3 integers");
      const int64_t start = bounds.size() > 1 ? bounds[0] : 0;
      const int64_t stop = bounds.size() > 1 ? bounds[1] : bounds[0];
      const int64_t step = bounds.size() > 2 ? bounds[2] : 1;
      if (step == 0) fail(ErrorKind::kInput, "chat template: range() step must not be zero");
      constexpr int64_t kMaxRange = 100000;  // the sandbox's MAX_RANGE
      ValueList items;
      for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (static_cast<int64_t>(items.size()) >= kMaxRange)
          fail(ErrorKind::kInput, "chat template: range() is too big (more than {} items)", kMaxRange);
        items.push_back(Value::integer(i));
      }
      return Value::list(std::move(items));
    });
  }
  return Value::callable(name, [](CallArgs& args) {  // strftime_now(format): local time, as HF does
    const Value* format = argument(args, 0, "format");
    if (!format || !format->is_string())
      fail(ErrorKind::kInput, "chat template: strftime_now() needs a format string");
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm local{};
    localtime_r(&now, &local);
    char buffer[512];
    const size_t n = format->as_string().empty()
                         ? 0
                         : std::strftime(buffer, sizeof(buffer), format->as_string().c_str(), &local);
    if (n == 0 && !format->as_string().empty())
      fail(ErrorKind::kInput, "chat template: strftime_now() format yields nothing or too much");
    return Value::string(std::string(buffer, n));
  });
}

}  // namespace tern::text::jinja
