// `tern inspect`: a report on a model file (config, tensor inventory, Hadamard contract, tokenizer,
// integer-width leniency), as JSON and as text. Building the report runs the same config and contract
// checks as loading, so a broken model fails here with the same one-line error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gguf/reader.h"

namespace tern::tools {

nlohmann::json inspect_report(const gguf::Reader& file);
std::string render_inspect_text(const nlohmann::json& report);

}  // namespace tern::tools
