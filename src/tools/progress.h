// A one-line progress bar on stderr for long file writes (bytes done / total, rate, ETA).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tern::tools {

class ProgressBar {
 public:
  // Draws nothing unless `enabled`.
  ProgressBar(std::string label, uint64_t total_bytes, bool enabled);
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();

  void advance(uint64_t bytes);  // redraws at most a few times a second
  void finish();                 // final redraw and newline

  // True when stderr is a terminal.
  static bool stderr_is_tty();

 private:
  void draw();

  using Clock = std::chrono::steady_clock;
  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace tern::tools
