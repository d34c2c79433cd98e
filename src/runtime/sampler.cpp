#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace tern::runtime {

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  float best_value = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best_value) {  // strict: the lowest index keeps a tie; NaN never compares greater
      best = static_cast<int32_t>(i);
      best_value = logits[i];
    }
  }
  return best;
}

Sampler::Sampler(int64_t vocab_size, SamplingParams params, std::span<const int32_t> banned)
    : vocab_size_(vocab_size),
      params_(params),
      banned_(banned.begin(), banned.end()),
      in_prompt_(static_cast<size_t>(vocab_size), 0),
      output_count_(static_cast<size_t>(vocab_size), 0),
      candidates_(static_cast<size_t>(vocab_size)),
      probs_(static_cast<size_t>(vocab_size)),
      rng_(params.seed) {
  if (vocab_size <= 0) fail(ErrorKind::kInput, "sampler: vocabulary size must be positive");
  // Written so that NaN fails every check: it would otherwise reach the draw and pick an arbitrary token.
  if (!std::isfinite(params.temperature))
    fail(ErrorKind::kInput, "temperature must be finite, got {}", params.temperature);
  if (!(params.top_p > 0.0f && params.top_p <= 1.0f))
    fail(ErrorKind::kInput, "top_p must be in (0, 1], got {}", params.top_p);
  if (!(params.min_p >= 0.0f && params.min_p <= 1.0f))
    fail(ErrorKind::kInput, "min_p must be in [0, 1], got {}", params.min_p);
  if (!(params.repetition_penalty > 0.0f && std::isfinite(params.repetition_penalty)))
    fail(ErrorKind::kInput, "repetition_penalty must be positive and finite, got {}",
         params.repetition_penalty);
  if (!std::isfinite(params.presence_penalty) || !std::isfinite(params.frequency_penalty)) {
    fail(ErrorKind::kInput, "presence and frequency penalties must be finite, got {} and {}",
         params.presence_penalty, params.frequency_penalty);
  }
  for (int32_t id : banned_) {
    if (id < 0 || id >= vocab_size) fail(ErrorKind::kInput, "sampler: banned token id {} out of range", id);
  }
  for (const auto& [id, bias] : params_.logit_bias) {
    if (id < 0 || id >= vocab_size) fail(ErrorKind::kInput, "logit_bias token id {} out of range", id);
    if (!std::isfinite(bias)) fail(ErrorKind::kInput, "logit_bias for token {} is not finite", id);
  }
  std::sort(banned_.begin(), banned_.end());
  seen_.reserve(static_cast<size_t>(vocab_size));
}

void Sampler::set_prompt(std::span<const int32_t> prompt) {
  for (int32_t id : prompt) {
    if (id < 0 || id >= vocab_size_) fail(ErrorKind::kInput, "prompt token id {} out of range", id);
    auto& mark = in_prompt_[static_cast<size_t>(id)];
    if (!mark && output_count_[static_cast<size_t>(id)] == 0) seen_.push_back(id);
    mark = 1;
  }
}

void Sampler::accept(int32_t token) {
  if (token < 0 || token >= vocab_size_) fail(ErrorKind::kInput, "accepted token id {} out of range", token);
  auto& count = output_count_[static_cast<size_t>(token)];
  if (count == 0 && !in_prompt_[static_cast<size_t>(token)]) seen_.push_back(token);
  ++count;
}

void Sampler::reset() {
  for (int32_t id : seen_) {
    in_prompt_[static_cast<size_t>(id)] = 0;
    output_count_[static_cast<size_t>(id)] = 0;
  }
  seen_.clear();
  rng_.seed(params_.seed);
}

void Sampler::apply_penalties(std::span<float> logits) const {
  const bool repetition = params_.repetition_penalty != 1.0f;
  for (int32_t id : seen_) {
    const size_t i = static_cast<size_t>(id);
    float& logit = logits[i];
    const int32_t count = output_count_[i];
    if (repetition && (in_prompt_[i] || count > 0)) {
      logit = logit > 0.0f ? logit / params_.repetition_penalty : logit * params_.repetition_penalty;
    }
    if (count > 0) {
      logit -= params_.presence_penalty + params_.frequency_penalty * static_cast<float>(count);
    }
  }
}

int32_t Sampler::sample(std::span<float> logits) {
  if (static_cast<int64_t>(logits.size()) != vocab_size_)
    fail(ErrorKind::kInternal, "sampler: {} logits for a vocabulary of {}", logits.size(), vocab_size_);
  for (const auto& [id, bias] : params_.logit_bias) logits[static_cast<size_t>(id)] += bias;
  apply_penalties(logits);
  for (int32_t id : banned_) logits[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
  if (params_.greedy()) return argmax(logits);
  return draw(logits);
}

bool Sampler::argmax_decides() const {
  return params_.greedy() && params_.logit_bias.empty() && params_.repetition_penalty == 1.0f &&
         params_.presence_penalty == 0.0f && params_.frequency_penalty == 0.0f;
}

bool Sampler::chooses_argmax(int32_t token, float logit) const {
  return argmax_decides() && token >= 0 && token < vocab_size_ &&
         logit > -std::numeric_limits<float>::infinity() &&
         !std::binary_search(banned_.begin(), banned_.end(), token);
}

// Temperature, then top-k, softmax, top-p and min-p over the survivors, then one seeded draw.
int32_t Sampler::draw(std::span<const float> logits) {
  const float inv_temperature = 1.0f / params_.temperature;
  size_t n = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isfinite(logits[i])) candidates_[n++] = static_cast<int32_t>(i);
  }
  if (n == 0) return argmax(logits);
  auto by_logit = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  const size_t keep = params_.top_k > 0 ? std::min(n, static_cast<size_t>(params_.top_k)) : n;
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep),
                    candidates_.begin() + static_cast<std::ptrdiff_t>(n), by_logit);
  n = keep;

  const float max_logit = logits[static_cast<size_t>(candidates_[0])];
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const float p = std::exp((logits[static_cast<size_t>(candidates_[i])] - max_logit) * inv_temperature);
    probs_[i] = p;
    total += p;
  }
  // Candidates are sorted by probability, so top-p and min-p both cut a suffix.
  double cumulative = 0.0;
  size_t cut = n;
  const double min_prob = static_cast<double>(params_.min_p) * (static_cast<double>(probs_[0]) / total);
  for (size_t i = 0; i < n; ++i) {
    const double p = probs_[i] / total;
    if (i > 0 && params_.min_p > 0.0f && p < min_prob) {
      cut = i;
      break;
    }
    cumulative += p;
    if (params_.top_p < 1.0f && cumulative >= static_cast<double>(params_.top_p)) {
      cut = i + 1;
      break;
    }
  }
  double kept = 0.0;
  for (size_t i = 0; i < cut; ++i) kept += probs_[i];
  std::uniform_real_distribution<double> uniform(0.0, kept);
  const double r = uniform(rng_);
  double acc = 0.0;
  for (size_t i = 0; i < cut; ++i) {
    acc += probs_[i];
    if (r < acc) return candidates_[i];
  }
  return candidates_[cut - 1];
}

}  // namespace tern::runtime
