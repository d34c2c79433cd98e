#include "text/think_stream.h"

#include <algorithm>

namespace tern::text {
namespace {

constexpr std::string_view kOpen = "<think>";
constexpr std::string_view kClose = "</think>";

// Length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t partial_tag_length(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

void ThinkStream::emit(std::string_view text, const Sink& sink) {
  if (text.empty()) return;
  (in_reasoning_ ? reasoning_ : content_).append(text);
  sink(text, in_reasoning_);
}

void ThinkStream::feed(std::string_view delta, const Sink& sink) {
  pending_.append(delta);
  for (;;) {
    const std::string_view tag = in_reasoning_ ? kClose : kOpen;
    const size_t at = pending_.find(tag);
    if (at == std::string::npos) break;
    emit(std::string_view(pending_).substr(0, at), sink);
    pending_.erase(0, at + tag.size());
    in_reasoning_ = !in_reasoning_;
  }
  const size_t held = partial_tag_length(pending_, in_reasoning_ ? kClose : kOpen);
  emit(std::string_view(pending_).substr(0, pending_.size() - held), sink);
  pending_.erase(0, pending_.size() - held);
}

void ThinkStream::finish(const Sink& sink) {
  emit(pending_, sink);
  pending_.clear();
}

bool ends_in_think_block(std::string_view prompt) {
  const size_t open = prompt.rfind(kOpen);
  if (open == std::string_view::npos) return false;
  const size_t close = prompt.rfind(kClose);
  return close == std::string_view::npos || close < open;
}

}  // namespace tern::text
