// One engine step's work (design.md "Engine::step"): each item is one sequence contributing one
// decode token or a prefill chunk, and says which logits it wants back.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/sequence_state.h"

namespace tern::runtime {

enum class LogitsWanted {
  kNone,  // state update only (a prefill chunk that is not the last)
  kLast,  // the row of the item's last token (decode, or the end of a prompt)
  kAll,   // one row per token (scoring)
};

struct BatchItem {
  SequenceState* state = nullptr;   // advanced by tokens.size() on success
  std::span<const int32_t> tokens;  // at least one token
  LogitsWanted want = LogitsWanted::kLast;
  // A decode step: the tokens were sampled, not given in a prompt. Decode items come before every
  // prompt item of a batch; the two roles may take different kernels (kernels/ops.h TokenRows), and only
  // prompt tokens are ever cached as prefixes.
  bool decoding = false;
  // With logits wanted: also the greedy pick of the last logit row (kernels::ref::argmax's choice),
  // folded into the head's own pass (kernels::Ops::matmul_argmax) instead of a scan of the row after it.
  bool want_argmax = false;
  // Out: [rows][vocab], rows = 0, 1 or tokens.size() by `want`. Points into the engine's scratch and
  // stays valid until its next step.
  std::span<const float> logits{};
  // Out: the pick, when want_argmax; -1 otherwise.
  int32_t argmax = -1;

  int64_t logit_rows() const {
    return want == LogitsWanted::kNone   ? 0
           : want == LogitsWanted::kLast ? 1
                                         : static_cast<int64_t>(tokens.size());
  }
};

}  // namespace tern::runtime
