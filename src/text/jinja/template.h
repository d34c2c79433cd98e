// A parsed chat template (model-spec §7.4): parsed once at model load, rendered per request with
// jinja2's semantics as Hugging Face configures them. Unsupported constructs fail at parse time.
#pragma once

#include <string>
#include <string_view>

#include "text/jinja/ast.h"
#include "text/jinja/value.h"

namespace tern::text::jinja {

class Template {
 public:
  // Throws Error(kUnsupported) naming the construct and its line for anything the engine cannot render.
  explicit Template(std::string_view source);

  // Renders with `variables` as the template's context (messages, tools, add_generation_prompt, ...).
  // Throws Error(kInput) for template errors: raise_exception(), undefined values, type errors.
  std::string render(const ValueDict& variables) const;

 private:
  Body body_;
};

}  // namespace tern::text::jinja
