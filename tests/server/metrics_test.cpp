// /metrics in the Prometheus text format: the finished-request counter has a series per finish reason
// from the start, and counts into it.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace tern::server {
namespace {

std::string series(const std::string& reason, int count) {
  return "tern:request_success_total{finished_reason=\"" + reason + "\"} " + std::to_string(count) + "\n";
}

TEST(Metrics, EveryFinishReasonHasASeriesFromZero) {
  Metrics metrics;
  const std::string fresh = metrics.render(runtime::SchedulerStats{});
  for (const char* reason : {"stop", "length", "tool_calls", "abort", "error"})
    EXPECT_NE(fresh.find(series(reason, 0)), std::string::npos) << reason;
  metrics.count_request("stop");
  metrics.count_request("stop");
  metrics.count_request("abort");
  const std::string after = metrics.render(runtime::SchedulerStats{});
  EXPECT_NE(after.find(series("stop", 2)), std::string::npos);
  EXPECT_NE(after.find(series("abort", 1)), std::string::npos);
  EXPECT_NE(after.find(series("length", 0)), std::string::npos);
}

}  // namespace
}  // namespace tern::server
