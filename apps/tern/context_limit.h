// The context a command allocates against the context the model declares it was trained for. Positions
// past that are outside what the model learned. `run`, `chat` and `perplexity` cap their context there and
// say so on stderr; `serve` keeps what its operator sized (a sequence's history may need it) and warns,
// as llama.cpp's server does.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/config.h"

namespace tern::app {

// A model that declares no length (0) caps nothing and is never past it.
bool past_trained_context(int64_t requested, const model::Config& config);

// requested, capped at the trained context with a note naming the option (e.g. "--ctx-size").
int64_t within_trained_context(int64_t requested, const model::Config& config, std::string_view option);

}  // namespace tern::app
