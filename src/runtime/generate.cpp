#include "runtime/generate.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/error.h"

namespace tern::runtime {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

GenerateStats generate(Engine& engine, SequenceState& state, std::span<const int32_t> prompt,
                       Generation& generation, const std::function<void(std::string_view)>& on_text,
                       const std::atomic<bool>* cancel) {
  if (prompt.empty()) fail(ErrorKind::kInput, "the prompt is empty");
  const int64_t needed =
      state.position() + static_cast<int64_t>(prompt.size()) + generation.limits().max_tokens - 1;
  if (needed > state.capacity()) {
    fail(ErrorKind::kCapacity,
         "prompt ({} tokens) plus max_tokens ({}) after {} earlier tokens exceeds the context of {}",
         prompt.size(), generation.limits().max_tokens, state.position(), state.capacity());
  }
  GenerateStats stats;
  stats.prompt_tokens = static_cast<int64_t>(prompt.size());
  const int64_t chunk = engine.limits().max_tokens;
  std::vector<float> logits(static_cast<size_t>(engine.model().config().vocab_size));
  GeneratedToken token;

  auto start = std::chrono::steady_clock::now();
  for (size_t offset = 0; offset < prompt.size(); offset += static_cast<size_t>(chunk)) {
    const size_t n = std::min(prompt.size() - offset, static_cast<size_t>(chunk));
    const bool last = offset + n == prompt.size();
    BatchItem item{&state, prompt.subspan(offset, n), last ? LogitsWanted::kLast : LogitsWanted::kNone, false,
                   generation.argmax_decides()};
    engine.step({&item, 1});
    if (last) token = generation.next(item.logits, item.argmax, logits);
  }
  stats.prompt_seconds = seconds_since(start);
  on_text(token.text);

  start = std::chrono::steady_clock::now();
  while (!generation.finished()) {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      on_text(generation.cancel());
      break;
    }
    const int32_t input = token.token;
    BatchItem item{&state, {&input, 1}, LogitsWanted::kLast, true, generation.argmax_decides()};
    engine.step({&item, 1});
    token = generation.next(item.logits, item.argmax, logits);
    on_text(token.text);
  }
  stats.generate_seconds = seconds_since(start);
  stats.generated_tokens = static_cast<int64_t>(generation.tokens().size());
  return stats;
}

}  // namespace tern::runtime
