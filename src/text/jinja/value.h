// The data model of the template engine: a Python-like value (model-spec §7.4). Lists and dicts are
// shared and immutable once built (the sandbox is immutable); only namespace() objects change.
// Dicts keep insertion order, as Python dicts do, so tojson and `items` match jinja2 byte for byte.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tern::text::jinja {

class Value;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;  // insertion order; keys unique

// Positional and keyword arguments of a call, in source order.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct Callable {
  std::string name;
  std::function<Value(CallArgs&)> invoke;
};

// jinja2's default Undefined: prints empty, is falsy, iterates as empty; most other uses fail with
// `message` (e.g. "'x' is undefined", "'dict object' has no attribute 'y'").
struct Undefined {
  std::string message;
};
struct None {};
// A string with markupsafe's Markup flag (set by `safe`): `+` with a plain string escapes the other side.
struct String {
  std::string text;
  bool markup = false;
};
struct Namespace {
  ValueDict attributes;
};

class Value {
 public:
  using Storage = std::variant<Undefined, None, bool, int64_t, double, String,
                               std::shared_ptr<const ValueList>, std::shared_ptr<const ValueDict>,
                               std::shared_ptr<Namespace>, std::shared_ptr<const Callable>>;

  Value() : storage_(Undefined{}) {}
  static Value undefined(std::string message) { return Value(Storage(Undefined{std::move(message)})); }
  static Value none() { return Value(Storage(None{})); }
  static Value boolean(bool b) { return Value(Storage(b)); }
  static Value integer(int64_t i) { return Value(Storage(i)); }
  static Value floating(double d) { return Value(Storage(d)); }
  static Value string(std::string s, bool markup = false) {
    return Value(Storage(String{std::move(s), markup}));
  }
  static Value list(ValueList items) {
    return Value(Storage(std::make_shared<const ValueList>(std::move(items))));
  }
  static Value dict(ValueDict items) {
    return Value(Storage(std::make_shared<const ValueDict>(std::move(items))));
  }
  static Value namespace_object(ValueDict attributes) {
    return Value(Storage(std::make_shared<Namespace>(Namespace{std::move(attributes)})));
  }
  static Value callable(std::string name, std::function<Value(CallArgs&)> invoke) {
    return Value(Storage(std::make_shared<const Callable>(Callable{std::move(name), std::move(invoke)})));
  }
  // JSON → Value with Python json.loads types (int vs float kept apart). Throws Error(kInput) for
  // integers beyond int64.
  static Value from_json(const nlohmann::ordered_json& json);

  bool is_undefined() const { return std::holds_alternative<Undefined>(storage_); }
  bool is_none() const { return std::holds_alternative<None>(storage_); }
  bool is_bool() const { return std::holds_alternative<bool>(storage_); }
  bool is_int() const { return std::holds_alternative<int64_t>(storage_); }
  bool is_float() const { return std::holds_alternative<double>(storage_); }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return std::holds_alternative<String>(storage_); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<const ValueList>>(storage_); }
  bool is_dict() const { return std::holds_alternative<std::shared_ptr<const ValueDict>>(storage_); }
  bool is_namespace() const { return std::holds_alternative<std::shared_ptr<Namespace>>(storage_); }
  bool is_callable() const { return std::holds_alternative<std::shared_ptr<const Callable>>(storage_); }

  bool as_bool() const { return std::get<bool>(storage_); }
  int64_t as_int() const { return std::get<int64_t>(storage_); }
  double as_float() const { return std::get<double>(storage_); }
  const std::string& as_string() const { return std::get<String>(storage_).text; }
  bool is_markup() const { return is_string() && std::get<String>(storage_).markup; }
  const ValueList& as_list() const { return *std::get<std::shared_ptr<const ValueList>>(storage_); }
  const ValueDict& as_dict() const { return *std::get<std::shared_ptr<const ValueDict>>(storage_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(storage_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<const Callable>>(storage_); }
  const std::string& undefined_message() const { return std::get<Undefined>(storage_).message; }

  // Numeric value of an int, float or bool (Python treats bool as int).
  double to_double() const;
  // Python truthiness.
  bool truthy() const;
  // Python type name as used in jinja2 messages ("dict", "str", "NoneType", ...).
  std::string type_name() const;

 private:
  explicit Value(Storage storage) : storage_(std::move(storage)) {}
  Storage storage_;
};

// Dict lookup by key; nullptr if absent.
const Value* find_key(const ValueDict& dict, std::string_view key);

// Python str(value) (what `{{ value }}` prints); Undefined prints as "".
std::string to_python_str(const Value& value);
// Python repr(value) (how items print inside a printed list or dict).
std::string to_python_repr(const Value& value);
// Python float repr: shortest round-trip digits, "1.0", "1e+20", "inf", "nan".
std::string python_float_repr(double value);

struct JsonDumpOptions {
  std::optional<std::string> indent;  // None: one line; else the indent unit per level
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
// Python json.dumps(value, ensure_ascii=False, ...), as HF's `tojson` filter calls it.
std::string json_dumps(const Value& value, const JsonDumpOptions& options);

// Python ==.
bool values_equal(const Value& a, const Value& b);

}  // namespace tern::text::jinja
