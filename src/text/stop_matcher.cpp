#include "text/stop_matcher.h"

#include <algorithm>

namespace tern::text {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

StopMatcher::Result StopMatcher::push(std::string_view text) {
  Result result;
  if (stopped_) {
    result.stopped = true;
    return result;
  }
  pending_.append(text);
  size_t first = std::string::npos;
  for (const auto& stop : stops_) first = std::min(first, pending_.find(stop));
  if (first != std::string::npos) {
    result.emit = pending_.substr(0, first);
    result.stopped = stopped_ = true;
    pending_.clear();
    return result;
  }
  const size_t keep = held_back_length();
  result.emit = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return result;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

// The longest suffix of pending_ that is a proper prefix of some stop string.
size_t StopMatcher::held_back_length() const {
  size_t best = 0;
  for (const auto& stop : stops_) {
    const size_t max_len = std::min(stop.size() - 1, pending_.size());
    for (size_t len = max_len; len > best; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) == std::string_view(stop).substr(0, len)) {
        best = len;
        break;
      }
    }
  }
  return best;
}

}  // namespace tern::text
