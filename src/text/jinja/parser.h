// Tokens → syntax tree, with jinja2's operator precedence. Everything the engine cannot render
// exactly (unknown tags, filters, tests, methods, functions; *args, recursive loops...) is rejected
// here, at model load, with Error(kUnsupported) naming the construct and its template line.
#pragma once

#include <string_view>

#include "text/jinja/ast.h"

namespace tern::text::jinja {

Body parse_template(std::string_view source);

}  // namespace tern::text::jinja
