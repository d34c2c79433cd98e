#include "tools/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tern::tools {

namespace {

constexpr int kBarWidth = 30;
constexpr auto kRedrawInterval = std::chrono::milliseconds(200);

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds));
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total_bytes, bool enabled)
    : label_(std::move(label)),
      total_(total_bytes),
      enabled_(enabled),
      start_(Clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && !finished_) std::fputc('\n', stderr);
}

bool ProgressBar::stderr_is_tty() {
  return isatty(STDERR_FILENO) == 1;
}

void ProgressBar::advance(uint64_t bytes) {
  done_ += bytes;
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  draw();
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  draw();
  std::fputc('\n', stderr);
  finished_ = true;
}

void ProgressBar::draw() {
  const double fraction = total_ == 0 ? 1.0 : static_cast<double>(done_) / static_cast<double>(total_);
  const auto filled = static_cast<int>(fraction * kBarWidth);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = elapsed > 0.0 ? static_cast<double>(done_) / elapsed : 0.0;
  const double eta = rate > 0.0 ? static_cast<double>(total_ - done_) / rate : 0.0;
  fmt::print(stderr, "\r{} [{}{}] {:.2f}/{:.2f} GB {:3.0f}% {:.0f} MB/s ETA {}  ", label_,
             std::string(static_cast<size_t>(filled), '#'),
             std::string(static_cast<size_t>(kBarWidth - filled), ' '), static_cast<double>(done_) / 1e9,
             static_cast<double>(total_) / 1e9, fraction * 100.0, rate / 1e6, format_duration(eta));
  std::fflush(stderr);
}

}  // namespace tern::tools
