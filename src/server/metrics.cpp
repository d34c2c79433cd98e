#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace tern::server {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto bucket =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help) const {
  std::lock_guard lock(mutex_);
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name, sum_, name,
                     count_);
}

namespace {

const std::vector<double> kLatencyBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
                                             0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
const std::vector<double> kTokenBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                           0.3,   0.4,   0.5,  0.75,  1.0,  2.5,   5.0, 10.0};

void gauge(std::string& out, const char* name, const char* help, double value) {
  out += fmt::format("# HELP tern:{} {}\n# TYPE tern:{} gauge\ntern:{} {}\n", name, help, name, name, value);
}

void counter(std::string& out, const char* name, const char* help, int64_t value) {
  out +=
      fmt::format("# HELP tern:{} {}\n# TYPE tern:{} counter\ntern:{} {}\n", name, help, name, name, value);
}

}  // namespace

Metrics::Metrics()
    : time_to_first_token(kLatencyBuckets),
      inter_token_latency(kTokenBuckets),
      request_latency(kLatencyBuckets),
      queue_time(kLatencyBuckets) {
  // Every reason's series exists from the start, so a scraper sees 0 rather than no series at all.
  for (const char* reason : {"stop", "length", "tool_calls", "abort", "error"}) requests_[reason] = 0;
}

void Metrics::count_request(const std::string& reason) {
  std::lock_guard lock(mutex_);
  ++requests_[reason];
}

std::string Metrics::render(const runtime::SchedulerStats& stats) const {
  std::string out;
  gauge(out, "num_requests_running", "Requests in the running batch.", static_cast<double>(stats.running));
  gauge(out, "num_requests_waiting", "Requests waiting to be admitted.", static_cast<double>(stats.waiting));
  gauge(out, "kv_cache_usage_perc", "Fraction of allocated KV positions in use (0-1).", stats.kv_usage);
  counter(out, "prompt_tokens_total", "Prompt tokens computed (prefix-cache hits excluded).",
          stats.prompt_tokens);
  counter(out, "generation_tokens_total", "Tokens generated.", stats.generation_tokens);
  counter(out, "prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
          stats.cache_queries);
  counter(out, "prefix_cache_hits_total", "Prompt tokens restored from the prefix cache.", stats.cache_hits);
  counter(out, "num_preemptions_total", "Sequences preempted (each owns its KV for its lifetime).",
          stats.preemptions);
  gauge(out, "prefix_cache_entries", "Checkpoints held by the prefix cache.",
        static_cast<double>(stats.cache.entries));
  gauge(out, "prefix_cache_bytes", "Bytes held by the prefix cache.", static_cast<double>(stats.cache.bytes));
  {
    std::lock_guard lock(mutex_);
    out += "# HELP tern:request_success_total Finished requests by finish reason.\n";
    out += "# TYPE tern:request_success_total counter\n";
    for (const auto& [reason, count] : requests_) {
      out += fmt::format("tern:request_success_total{{finished_reason=\"{}\"}} {}\n", reason, count);
    }
  }
  time_to_first_token.render(out, "tern:time_to_first_token_seconds",
                             "Time from arrival to the first token.");
  inter_token_latency.render(out, "tern:inter_token_latency_seconds", "Time between consecutive tokens.");
  request_latency.render(out, "tern:e2e_request_latency_seconds", "Time from arrival to the last token.");
  queue_time.render(out, "tern:request_queue_time_seconds", "Time waiting for admission.");
  return out;
}

}  // namespace tern::server
