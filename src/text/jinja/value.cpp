#include "text/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace tern::text::jinja {

Value Value::from_json(const nlohmann::ordered_json& json) {
  using Type = nlohmann::ordered_json::value_t;
  switch (json.type()) {
    case Type::null:
      return none();
    case Type::boolean:
      return boolean(json.get<bool>());
    case Type::number_integer:
      return integer(json.get<int64_t>());
    case Type::number_unsigned: {
      const uint64_t u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(ErrorKind::kInput, "request: integer {} is beyond the 64-bit range tern supports", u);
      return integer(static_cast<int64_t>(u));
    }
    case Type::number_float:
      return floating(json.get<double>());
    case Type::string:
      return string(json.get<std::string>());
    case Type::array: {
      ValueList items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json(item));
      return list(std::move(items));
    }
    case Type::object: {
      ValueDict items;
      items.reserve(json.size());
      for (const auto& [key, item] : json.items()) items.emplace_back(key, from_json(item));
      return dict(std::move(items));
    }
    default:
      fail(ErrorKind::kInput, "request: binary JSON values are not supported");
  }
}

double Value::to_double() const {
  if (is_int()) return static_cast<double>(as_int());
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  return as_float();
}

bool Value::truthy() const {
  return std::visit(
      [](const auto& v) -> bool {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Undefined> || std::is_same_v<T, None>)
          return false;
        else if constexpr (std::is_same_v<T, bool>)
          return v;
        else if constexpr (std::is_same_v<T, int64_t>)
          return v != 0;
        else if constexpr (std::is_same_v<T, double>)
          return v != 0.0;
        else if constexpr (std::is_same_v<T, String>)
          return !v.text.empty();
        else if constexpr (std::is_same_v<T, std::shared_ptr<const ValueList>> ||
                           std::is_same_v<T, std::shared_ptr<const ValueDict>>)
          return !v->empty();
        else
          return true;
      },
      storage_);
}

std::string Value::type_name() const {
  if (is_undefined()) return "Undefined";
  if (is_none()) return "NoneType";
  if (is_bool()) return "bool";
  if (is_int()) return "int";
  if (is_float()) return "float";
  if (is_string()) return "str";
  if (is_list()) return "list";
  if (is_dict()) return "dict";
  if (is_namespace()) return "Namespace";
  return "function";
}

const Value* find_key(const ValueDict& dict, std::string_view key) {
  for (const auto& [k, v] : dict)
    if (k == key) return &v;
  return nullptr;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, e.g. "1.2345e+02", then laid out as Python's repr:
  // positional when -4 <= exponent < 16, scientific otherwise.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string sci(buffer, result.ptr);
  const size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (const char c : mantissa)
    if (c != '.') digits += c;
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else {
      const auto point = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= point)
        out = digits + std::string(point - digits.size(), '0') + ".0";
      else
        out = digits.substr(0, point).append(".").append(digits.substr(point));
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exponent < 0 ? "e-" : "e+";
    const std::string exp_digits = std::to_string(std::abs(exponent));
    out += (exp_digits.size() < 2 ? "0" : "") + exp_digits;
  }
  return negative ? "-" + out : out;
}

namespace {

std::string python_string_repr(const std::string& s) {
  const bool use_double = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char quote = use_double ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out + quote;
}

}  // namespace

std::string to_python_repr(const Value& value) {
  if (value.is_string()) return python_string_repr(value.as_string());
  return to_python_str(value);
}

std::string to_python_str(const Value& value) {
  if (value.is_undefined()) return "";
  if (value.is_none()) return "None";
  if (value.is_bool()) return value.as_bool() ? "True" : "False";
  if (value.is_int()) return std::to_string(value.as_int());
  if (value.is_float()) return python_float_repr(value.as_float());
  if (value.is_string()) return value.as_string();
  if (value.is_list()) {
    std::string out = "[";
    for (size_t i = 0; i < value.as_list().size(); ++i) {
      if (i) out += ", ";
      out += to_python_repr(value.as_list()[i]);
    }
    return out + "]";
  }
  const auto dict_repr = [](const ValueDict& dict) {
    std::string out = "{";
    for (size_t i = 0; i < dict.size(); ++i) {
      if (i) out += ", ";
      out += python_string_repr(dict[i].first) + ": " + to_python_repr(dict[i].second);
    }
    return out + "}";
  };
  if (value.is_dict()) return dict_repr(value.as_dict());
  if (value.is_namespace()) return "<Namespace " + dict_repr(value.as_namespace().attributes) + ">";
  return "<function " + value.as_callable().name + ">";
}

namespace {

void dump_json_string(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  out += '"';
}

void dump_json(const Value& value, const JsonDumpOptions& options, int depth, std::string& out) {
  const auto newline = [&](int level) {
    if (!options.indent) return;
    out += '\n';
    for (int i = 0; i < level; ++i) out += *options.indent;
  };
  if (value.is_none()) {
    out += "null";
  } else if (value.is_bool()) {
    out += value.as_bool() ? "true" : "false";
  } else if (value.is_int()) {
    out += std::to_string(value.as_int());
  } else if (value.is_float()) {
    const double d = value.as_float();
    out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python_float_repr(d);
  } else if (value.is_string()) {
    dump_json_string(value.as_string(), out);
  } else if (value.is_list()) {
    const ValueList& items = value.as_list();
    if (items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += options.item_separator;
      newline(depth + 1);
      dump_json(items[i], options, depth + 1, out);
    }
    newline(depth);
    out += ']';
  } else if (value.is_dict() || value.is_namespace()) {
    if (value.is_namespace())
      fail(ErrorKind::kInput, "chat template: tojson: Object of type Namespace is not JSON serializable");
    std::vector<const std::pair<std::string, Value>*> entries;
    for (const auto& entry : value.as_dict()) entries.push_back(&entry);
    if (options.sort_keys)
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto* a, const auto* b) { return a->first < b->first; });
    if (entries.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) out += options.item_separator;
      newline(depth + 1);
      dump_json_string(entries[i]->first, out);
      out += options.key_separator;
      dump_json(entries[i]->second, options, depth + 1, out);
    }
    newline(depth);
    out += '}';
  } else {
    fail(ErrorKind::kInput, "chat template: tojson: Object of type {} is not JSON serializable",
         value.type_name());
  }
}

}  // namespace

std::string json_dumps(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  dump_json(value, options, 0, out);
  return out;
}

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
    const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
    return x == y;
  }
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_none() && b.is_none()) return true;
  if (a.is_undefined() && b.is_undefined()) return true;
  if (a.is_list() && b.is_list()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!values_equal(x[i], y[i])) return false;
    return true;
  }
  if (a.is_dict() && b.is_dict()) {
    const ValueDict& x = a.as_dict();
    const ValueDict& y = b.as_dict();
    if (x.size() != y.size()) return false;
    for (const auto& [key, item] : x) {
      const Value* other = find_key(y, key);
      if (!other || !values_equal(item, *other)) return false;
    }
    return true;
  }
  if (a.is_namespace() && b.is_namespace()) return &a.as_namespace() == &b.as_namespace();
  return false;
}

}  // namespace tern::text::jinja
