// The embedded default model: the `tiny` synthetic preset, made on first use and kept in the user's
// cache, so `tern run` works with no model file at hand.
#pragma once

#include <string>

namespace tern::tools {

// $TERN_DEFAULT_MODEL if set, else $XDG_CACHE_HOME/tern/tiny-pq2_0.gguf (~/.cache by default).
std::string default_model_path();

// The path of the default model, making it first if it does not exist (atomically: written beside,
// then renamed). Throws Error(kIo) if it cannot be written.
std::string ensure_default_model();

}  // namespace tern::tools
