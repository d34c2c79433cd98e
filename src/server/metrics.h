// Prometheus text exposition of the server's metrics, with vLLM's meaning under a `tern:` prefix
// (docs/notes-serving.md): gauges for running/waiting requests and KV usage, counters for prompt and
// generation tokens, prefix-cache queries and hits, preemptions, finished requests, and histograms of
// time to first token, inter-token latency, end-to-end latency and queue time. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/scheduler.h"

namespace tern::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  // Appends the _bucket, _sum and _count lines.
  void render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mutex_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; one more for +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  Histogram time_to_first_token;
  Histogram inter_token_latency;
  Histogram request_latency;
  Histogram queue_time;

  // Counts a finished request by finish reason ("stop", "length", "tool_calls", "abort", "error").
  void count_request(const std::string& reason);
  std::string render(const runtime::SchedulerStats& stats) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> requests_;
};

}  // namespace tern::server
