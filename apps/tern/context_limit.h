// The context a command allocates: what its option asked, capped by the context the model declares it
// was trained for. Positions past that are outside what the model learned; llama.cpp warns and goes on,
// tern caps and says so on stderr, so a long request never silently computes with untrained positions.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/config.h"

namespace tern::app {

// option: the option's name for the note, e.g. "--ctx-size". A model that declares no length (0)
// caps nothing.
int64_t within_trained_context(int64_t requested, const model::Config& config, std::string_view option);

}  // namespace tern::app
