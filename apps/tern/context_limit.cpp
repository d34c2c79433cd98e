#include "apps/tern/context_limit.h"

#include <fmt/format.h>

namespace tern::app {

int64_t within_trained_context(int64_t requested, const model::Config& config, std::string_view option) {
  const int64_t trained = config.context_length;
  if (trained <= 0 || requested <= trained) return requested;
  fmt::print(stderr, "tern: {} {} is past the model's trained context of {} tokens; using {}\n", option,
             requested, trained, trained);
  return trained;
}

}  // namespace tern::app
