#include "apps/tern/context_limit.h"

#include <fmt/format.h>

namespace tern::app {

bool past_trained_context(int64_t requested, const model::Config& config) {
  return config.context_length > 0 && requested > config.context_length;
}

int64_t within_trained_context(int64_t requested, const model::Config& config, std::string_view option) {
  if (!past_trained_context(requested, config)) return requested;
  fmt::print(stderr, "tern: {} {} is past the model's trained context of {} tokens; using {}\n", option,
             requested, config.context_length, config.context_length);
  return config.context_length;
}

}  // namespace tern::app
