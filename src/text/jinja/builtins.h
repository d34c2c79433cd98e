// Filters, tests, methods and global functions of the engine: the subset the real Qwen chat
// templates use, with jinja2 / Python semantics and Hugging Face's additions (tojson, raise_exception,
// strftime_now). The parser checks names against these lists so a template needing anything else
// fails at load.
#pragma once

#include <string>
#include <string_view>

#include "text/jinja/value.h"

namespace tern::text::jinja {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);
bool is_known_method(std::string_view name);
bool is_known_global(std::string_view name);

// `line` is the template line, for error messages.
Value apply_filter(const std::string& name, const Value& operand, CallArgs& args, int line);
bool apply_test(const std::string& name, const Value& operand, CallArgs& args, int line);
// jinja2's getattr(obj, name): bound methods first, then dict keys / namespace attributes;
// Undefined when absent; Error when obj is itself Undefined.
Value get_attribute(const Value& object, const std::string& name, int line);
// jinja2's getitem(obj, key): dict key, list or string index (negative from the end); string keys fall
// back to get_attribute.
Value get_item(const Value& object, const Value& key, int line);
Value global_function(const std::string& name);

// Python operators. Throw Error(kInput) with the template line on a type error.
Value binary_operation(const std::string& op, const Value& left, const Value& right, int line);
bool compare_values(const std::string& op, const Value& left, const Value& right, int line);
Value slice_value(const Value& object, const Value& start, const Value& stop, const Value& step, int line);
// Python iteration: list items, dict keys, string code points; Undefined iterates as empty.
ValueList iterate(const Value& value, int line);
// Error(kInput) for using an Undefined where a value is needed.
[[noreturn]] void fail_undefined(const Value& value, int line);

}  // namespace tern::text::jinja
