#include "runtime/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tern::runtime {

double log_sum_exp(std::span<const float> logits) {
  float max_logit = -std::numeric_limits<float>::infinity();
  for (float v : logits) max_logit = std::max(max_logit, v);
  if (!std::isfinite(max_logit)) return max_logit;
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - max_logit);
  return max_logit + std::log(sum);
}

Logprobs compute_logprobs(std::span<const float> logits, int32_t chosen, int top_n) {
  const double lse = log_sum_exp(logits);
  Logprobs out;
  out.chosen = {chosen, static_cast<float>(logits[static_cast<size_t>(chosen)] - lse)};
  if (top_n <= 0) return out;
  // A bounded selection: keep the best top_n seen so far, sorted by (logit desc, id asc).
  auto better = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::vector<int32_t> best;
  best.reserve(static_cast<size_t>(top_n) + 1);
  for (size_t i = 0; i < logits.size(); ++i) {
    const int32_t id = static_cast<int32_t>(i);
    if (best.size() == static_cast<size_t>(top_n) && !better(id, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), id, better), id);
    if (best.size() > static_cast<size_t>(top_n)) best.pop_back();
  }
  for (int32_t id : best) out.top.push_back({id, static_cast<float>(logits[static_cast<size_t>(id)] - lse)});
  return out;
}

}  // namespace tern::runtime
