// Generation for one sequence through the engine (a batch of one): the prompt in chunks, then one token
// per step until the Generation finishes. `tern run` and `tern chat` use it; the server batches many
// sequences through the same Engine::step and Generation instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "runtime/engine.h"
#include "runtime/generation.h"

namespace tern::runtime {

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prompt_seconds = 0.0;    // prefill, up to the first sampled token
  double generate_seconds = 0.0;  // the decode steps after it
};

// Feeds `prompt` to `state` (which may already hold earlier turns), then generates. `on_text` gets each
// visible text delta. Setting `*cancel` stops after the current step (the generation is cancelled).
// Throws Error(kCapacity) before any work if prompt plus max_tokens cannot fit the sequence.
GenerateStats generate(Engine& engine, SequenceState& state, std::span<const int32_t> prompt,
                       Generation& generation, const std::function<void(std::string_view)>& on_text,
                       const std::atomic<bool>* cancel = nullptr);

}  // namespace tern::runtime
