// Token selection from one row of logits: logit bias, penalties, temperature, top-k, top-p, min-p, seeded
// draw. Greedy (temperature <= 0) is argmax with the lowest index winning ties (model-spec §8.2). All buffers
// are sized at construction: sampling allocates nothing.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace tern::runtime {

struct SamplingParams {
  float temperature = 0.0f;         // <= 0: greedy
  int32_t top_k = 0;                // <= 0: off
  float top_p = 1.0f;               // in (0, 1]; 1: off
  float min_p = 0.0f;               // <= 0: off
  float repetition_penalty = 1.0f;  // HF/vLLM style, over prompt and output; 1: off
  float presence_penalty = 0.0f;    // OpenAI style, over output tokens
  float frequency_penalty = 0.0f;   // OpenAI style, over output tokens
  uint64_t seed = 0;
  // OpenAI logit_bias: (token id, bias) added to the raw logits before the penalties; ids must be in
  // the vocabulary.
  std::vector<std::pair<int32_t, float>> logit_bias;

  bool greedy() const { return temperature <= 0.0f; }
};

// Lowest index wins ties; NaN never wins.
int32_t argmax(std::span<const float> logits);

class Sampler {
 public:
  // `banned` ids (e.g. padding rows typed UNUSED) are never chosen.
  Sampler(int64_t vocab_size, SamplingParams params, std::span<const int32_t> banned = {});

  // Tokens the repetition penalty sees before any output (the prompt).
  void set_prompt(std::span<const int32_t> prompt);
  // Chooses the next token; `logits` is modified in place (penalties, masking, temperature).
  int32_t sample(std::span<float> logits);
  // Whether sample() is the row's plain argmax: greedy with no logit bias and no penalties.
  bool argmax_decides() const;
  // Whether sample() would return `token`, the row's kernels::ref::argmax whose logit is `logit`, without
  // reading the row: argmax_decides(), the token not banned and its logit above -inf (so the banned ids'
  // -inf cannot tie with it).
  bool chooses_argmax(int32_t token, float logit) const;
  // Records a token that was emitted (feeds the output penalties).
  void accept(int32_t token);
  void reset();

  const SamplingParams& params() const { return params_; }

 private:
  void apply_penalties(std::span<float> logits) const;
  int32_t draw(std::span<const float> logits);

  int64_t vocab_size_;
  SamplingParams params_;
  std::vector<int32_t> banned_;        // sorted
  std::vector<uint8_t> in_prompt_;     // per token: appeared in the prompt
  std::vector<int32_t> output_count_;  // per token: times emitted
  std::vector<int32_t> seen_;          // tokens with a non-zero mark, for O(seen) resets
  std::vector<int32_t> candidates_;    // scratch: candidate ids
  std::vector<float> probs_;           // scratch: candidate probabilities
  std::mt19937_64 rng_;
};

}  // namespace tern::runtime
