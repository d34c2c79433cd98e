// Finds stop strings in streamed text. Text that could still become a stop string is held back,
// so nothing after (or part of) a stop string is ever emitted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tern::text {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  struct Result {
    std::string emit;      // safe to show now
    bool stopped = false;  // a stop string was found; emit ends just before it
  };

  Result push(std::string_view text);
  // End of generation: everything still held back is released.
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  size_t held_back_length() const;

  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace tern::text
