// jinja2 filters and tests (with Hugging Face's tojson), as apply_filter / apply_test.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "text/jinja/builtins.h"
#include "text/jinja/py_string.h"

namespace tern::text::jinja {
namespace {

[[noreturn]] void fail_filter(int line, const std::string& name, const std::string& what) {
  fail(ErrorKind::kInput, "chat template line {}: filter '{}': {}", line, name, what);
}

const Value* argument(CallArgs& args, size_t index, std::string_view name) {
  if (index < args.positional.size()) return &args.positional[index];
  for (const auto& [key, value] : args.keyword)
    if (key == name) return &value;
  return nullptr;
}

void check_arguments(CallArgs& args, std::initializer_list<std::string_view> names, const std::string& filter,
                     int line) {
  if (args.positional.size() > names.size())
    fail_filter(line, filter, fmt::format("takes at most {} arguments", names.size()));
  for (const auto& [key, value] : args.keyword)
    if (std::find(names.begin(), names.end(), key) == names.end())
      fail_filter(line, filter, fmt::format("unexpected keyword argument '{}'", key));
}

const std::string* optional_string(const Value* v, const std::string& filter, int line) {
  if (!v || v->is_none()) return nullptr;
  if (!v->is_string()) fail_filter(line, filter, "needs a string argument");
  return &v->as_string();
}

Value tojson(const Value& value, CallArgs& args, int line) {
  check_arguments(args, {"ensure_ascii", "indent", "separators", "sort_keys"}, "tojson", line);
  JsonDumpOptions options;
  if (const Value* ensure_ascii = argument(args, 0, "ensure_ascii"); ensure_ascii && ensure_ascii->truthy())
    fail(ErrorKind::kUnsupported, "chat template line {}: tojson(ensure_ascii=true) is not supported", line);
  if (const Value* indent = argument(args, 1, "indent"); indent && !indent->is_none()) {
    if (indent->is_int())
      options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent->as_int())), ' ');
    else if (indent->is_string())
      options.indent = indent->as_string();
    else
      fail_filter(line, "tojson", "indent must be an integer or a string");
    options.item_separator = std::string(1, ',');  // Python json: "," once indenting
  }
  if (const Value* separators = argument(args, 2, "separators"); separators && !separators->is_none()) {
    if (!separators->is_list() || separators->as_list().size() != 2 ||
        !separators->as_list()[0].is_string() || !separators->as_list()[1].is_string())
      fail_filter(line, "tojson", "separators must be a pair of strings");
    options.item_separator = separators->as_list()[0].as_string();
    options.key_separator = separators->as_list()[1].as_string();
  }
  if (const Value* sort_keys = argument(args, 3, "sort_keys")) options.sort_keys = sort_keys->truthy();
  return Value::string(json_dumps(value, options));
}

// jinja2's attribute="a.b" lookup (dotted path; integer parts index lists).
Value attribute_path(const Value& item, const Value& attribute, int line) {
  if (attribute.is_int()) return get_item(item, attribute, line);
  if (!attribute.is_string()) fail_filter(line, "map", "attribute must be a string or an integer");
  const std::string dot = ".";
  Value current = item;
  for (const std::string& part : python_split(attribute.as_string(), &dot, -1, false))
    current = get_item(current, Value::string(part), line);
  return current;
}

Value to_int(const Value& value, const Value& fallback) {
  if (value.is_int()) return value;
  if (value.is_bool()) return Value::integer(value.as_bool());
  if (value.is_float())
    return std::isfinite(value.as_float()) ? Value::integer(static_cast<int64_t>(value.as_float()))
                                           : fallback;
  if (value.is_string()) {
    const std::string text = python_strip(value.as_string(), nullptr, true, true);
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (!text.empty() && end == text.c_str() + text.size() && errno == 0) return Value::integer(parsed);
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(d) && std::fabs(d) < 9.2e18)
      return Value::integer(static_cast<int64_t>(d));
  }
  return fallback;
}

Value to_float(const Value& value, const Value& fallback) {
  if (value.is_number()) return Value::floating(value.to_double());
  if (value.is_string()) {
    const std::string text = python_strip(value.as_string(), nullptr, true, true);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) return Value::floating(d);
  }
  return fallback;
}

ValueList select_items(const std::string& name, const Value& value, CallArgs& args, int line) {
  if (args.positional.empty() || !args.positional[0].is_string())
    fail_filter(line, name, "needs an attribute name");
  const Value attribute = args.positional[0];
  const bool has_test = args.positional.size() > 1;
  std::string test_name;
  CallArgs test_args;
  if (has_test) {
    if (!args.positional[1].is_string() || !is_known_test(args.positional[1].as_string()))
      fail(ErrorKind::kUnsupported, "chat template line {}: {}: unsupported test", line, name);
    test_name = args.positional[1].as_string();
    test_args.positional.assign(args.positional.begin() + 2, args.positional.end());
  }
  ValueList kept;
  for (const Value& item : iterate(value, line)) {
    const Value field = attribute_path(item, attribute, line);
    const bool passed = has_test ? apply_test(test_name, field, test_args, line) : field.truthy();
    if (passed == (name == "selectattr")) kept.push_back(item);
  }
  return kept;
}

}  // namespace

Value apply_filter(const std::string& name, const Value& value, CallArgs& args, int line) {
  if (name == "length" || name == "count") {
    check_arguments(args, {}, name, line);
    if (value.is_string())
      return Value::integer(static_cast<int64_t>(utf8_decode(value.as_string(), "string").size()));
    if (value.is_list()) return Value::integer(static_cast<int64_t>(value.as_list().size()));
    if (value.is_dict()) return Value::integer(static_cast<int64_t>(value.as_dict().size()));
    if (value.is_undefined()) return Value::integer(0);
    fail_filter(line, name, fmt::format("object of type '{}' has no len()", value.type_name()));
  }
  if (name == "tojson") return tojson(value, args, line);
  if (name == "trim") {
    check_arguments(args, {"chars"}, name, line);
    return Value::string(python_strip(to_python_str(value),
                                      optional_string(argument(args, 0, "chars"), name, line), true, true));
  }
  if (name == "items") {
    check_arguments(args, {}, name, line);
    if (value.is_undefined()) return Value::list({});
    if (!value.is_dict()) fail_filter(line, name, "Can only get item pairs from a mapping.");
    ValueList pairs;
    for (const auto& [key, item] : value.as_dict()) pairs.push_back(Value::list({Value::string(key), item}));
    return Value::list(std::move(pairs));
  }
  if (name == "join") {
    check_arguments(args, {"d", "attribute"}, name, line);
    const std::string* separator = optional_string(argument(args, 0, "d"), name, line);
    const Value* attribute = argument(args, 1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(value, line)) {
      if (!first && separator) out += *separator;
      first = false;
      out +=
          to_python_str(attribute && !attribute->is_none() ? attribute_path(item, *attribute, line) : item);
    }
    return Value::string(std::move(out));
  }
  if (name == "default" || name == "d") {
    check_arguments(args, {"default_value", "boolean"}, name, line);
    const Value* fallback = argument(args, 0, "default_value");
    const Value* boolean = argument(args, 1, "boolean");
    const bool use_fallback = value.is_undefined() || (boolean && boolean->truthy() && !value.truthy());
    return use_fallback ? (fallback ? *fallback : Value::string("")) : value;
  }
  if (name == "first" || name == "last") {
    check_arguments(args, {}, name, line);
    const ValueList items = iterate(value, line);
    if (items.empty()) return Value::undefined(fmt::format("No {} item, sequence was empty.", name));
    return name == "first" ? items.front() : items.back();
  }
  if (name == "upper") return Value::string(python_upper(to_python_str(value)));
  if (name == "lower") return Value::string(python_lower(to_python_str(value)));
  if (name == "capitalize") return Value::string(python_capitalize(to_python_str(value)));
  if (name == "title") return Value::string(python_title(to_python_str(value)));
  if (name == "replace") {
    check_arguments(args, {"old", "new", "count"}, name, line);
    const std::string* old_text = optional_string(argument(args, 0, "old"), name, line);
    const std::string* new_text = optional_string(argument(args, 1, "new"), name, line);
    if (!old_text || !new_text) fail_filter(line, name, "needs old and new strings");
    const Value* count = argument(args, 2, "count");
    return Value::string(python_replace(to_python_str(value), *old_text, *new_text,
                                        count && count->is_int() ? count->as_int() : -1));
  }
  if (name == "string") return value.is_markup() ? value : Value::string(to_python_str(value));
  if (name == "safe") return value.is_markup() ? value : Value::string(to_python_str(value), true);
  if (name == "escape" || name == "e")
    return value.is_markup() ? value : Value::string(html_escape(to_python_str(value)), true);
  if (name == "int") {
    check_arguments(args, {"default", "base"}, name, line);
    const Value* fallback = argument(args, 0, "default");
    return to_int(value, fallback ? *fallback : Value::integer(0));
  }
  if (name == "float") {
    check_arguments(args, {"default"}, name, line);
    const Value* fallback = argument(args, 0, "default");
    return to_float(value, fallback ? *fallback : Value::floating(0.0));
  }
  if (name == "list") return Value::list(iterate(value, line));
  if (name == "reverse") {
    if (value.is_string()) return slice_value(value, Value(), Value(), Value::integer(-1), line);
    ValueList items = iterate(value, line);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "abs") {
    if (value.is_int()) return Value::integer(value.as_int() < 0 ? -value.as_int() : value.as_int());
    if (value.is_float()) return Value::floating(std::fabs(value.as_float()));
    fail_filter(line, name, fmt::format("bad operand type for abs(): '{}'", value.type_name()));
  }
  if (name == "map") {
    const Value* attribute = argument(args, 99, "attribute");
    ValueList mapped;
    if (attribute) {
      const Value* fallback = argument(args, 99, "default");
      for (const Value& item : iterate(value, line)) {
        Value field = attribute_path(item, *attribute, line);
        mapped.push_back(field.is_undefined() && fallback ? *fallback : field);
      }
      return Value::list(std::move(mapped));
    }
    if (args.positional.empty() || !args.positional[0].is_string() ||
        !is_known_filter(args.positional[0].as_string()))
      fail(ErrorKind::kUnsupported,
           "chat template line {}: map() needs attribute= or a supported filter name", line);
    const std::string filter = args.positional[0].as_string();
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keyword = args.keyword;
    for (const Value& item : iterate(value, line)) {
      CallArgs copy = rest;
      mapped.push_back(apply_filter(filter, item, copy, line));
    }
    return Value::list(std::move(mapped));
  }
  if (name == "selectattr" || name == "rejectattr") return Value::list(select_items(name, value, args, line));
  if (name == "unique") {
    check_arguments(args, {"case_sensitive", "attribute"}, name, line);
    const Value* case_sensitive = argument(args, 0, "case_sensitive");
    const Value* attribute = argument(args, 1, "attribute");
    ValueList kept;
    ValueList seen;
    for (const Value& item : iterate(value, line)) {
      Value key = attribute && !attribute->is_none() ? attribute_path(item, *attribute, line) : item;
      if (key.is_string() && !(case_sensitive && case_sensitive->truthy()))
        key = Value::string(python_lower(key.as_string()));
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return values_equal(s, key); })) {
        seen.push_back(key);
        kept.push_back(item);
      }
    }
    return Value::list(std::move(kept));
  }
  fail(ErrorKind::kUnsupported, "chat template line {}: unsupported filter '{}'", line, name);
}

bool apply_test(const std::string& name, const Value& value, CallArgs& args, int line) {
  const Value* other = argument(args, 0, "");
  const auto need_other = [&]() -> const Value& {
    if (!other) fail(ErrorKind::kInput, "chat template line {}: test '{}' needs an argument", line, name);
    return *other;
  };
  if (name == "defined") return !value.is_undefined();
  if (name == "undefined") return value.is_undefined();
  if (name == "none") return value.is_none();
  if (name == "string") return value.is_string();
  if (name == "mapping") return value.is_dict();
  if (name == "sequence")
    return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
  if (name == "iterable")
    return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
  if (name == "number") return value.is_number();
  if (name == "integer") return value.is_int();
  if (name == "float") return value.is_float();
  if (name == "boolean") return value.is_bool();
  if (name == "true") return value.is_bool() && value.as_bool();
  if (name == "false") return value.is_bool() && !value.as_bool();
  if (name == "callable") return value.is_callable();
  if (name == "equalto" || name == "eq") return compare_values("==", value, need_other(), line);
  if (name == "ne") return compare_values("!=", value, need_other(), line);
  if (name == "lt") return compare_values("<", value, need_other(), line);
  if (name == "le") return compare_values("<=", value, need_other(), line);
  if (name == "gt") return compare_values(">", value, need_other(), line);
  if (name == "ge") return compare_values(">=", value, need_other(), line);
  if (name == "in") return compare_values("in", value, need_other(), line);
  if (name == "sameas") {
    const Value& b = need_other();
    if (value.is_none() || b.is_none()) return value.is_none() && b.is_none();
    if (value.is_bool() || b.is_bool())
      return value.is_bool() && b.is_bool() && value.as_bool() == b.as_bool();
    fail(ErrorKind::kUnsupported,
         "chat template line {}: 'sameas' is only supported for none, true and false", line);
  }
  if (name == "lower" || name == "upper") {
    const std::string text = to_python_str(value);
    const std::string mapped = name == "lower" ? python_lower(text) : python_upper(text);
    const std::string other_case = name == "lower" ? python_upper(text) : python_lower(text);
    return mapped == text && other_case != text;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!value.is_int())
      fail(ErrorKind::kInput, "chat template line {}: test '{}' needs an integer", line, name);
    const int64_t divisor = name == "divisibleby" ? (need_other().is_int() ? other->as_int() : 0) : 2;
    if (divisor == 0)
      fail(ErrorKind::kInput, "chat template line {}: divisibleby needs a non-zero integer", line);
    const bool divisible = value.as_int() % divisor == 0;
    return name == "odd" ? !divisible : divisible;
  }
  fail(ErrorKind::kUnsupported, "chat template line {}: unsupported test '{}'", line, name);
}

}  // namespace tern::text::jinja
