// Log-probabilities of a logits row (OpenAI `logprobs` / `top_logprobs`, and teacher-forced scoring).
// Computed from the model's own distribution, before penalties and temperature, as vLLM reports them.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tern::runtime {

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

// log Σ exp(logits), in double for stability.
double log_sum_exp(std::span<const float> logits);

// The chosen token's logprob and the `top_n` most likely tokens (ties: lowest id first).
struct Logprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};
Logprobs compute_logprobs(std::span<const float> logits, int32_t chosen, int top_n);

}  // namespace tern::runtime
