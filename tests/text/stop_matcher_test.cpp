#include "text/stop_matcher.h"

#include <gtest/gtest.h>

#include <string>

namespace tern::text {
namespace {

TEST(StopMatcher, PassesTextWithoutStops) {
  StopMatcher matcher({"STOP"});
  auto r = matcher.push("hello world");
  EXPECT_EQ(r.emit, "hello world");
  EXPECT_FALSE(r.stopped);
}

TEST(StopMatcher, StopsBeforeTheStopString) {
  StopMatcher matcher({"\n\n"});
  auto r = matcher.push("answer\n\nmore");
  EXPECT_EQ(r.emit, "answer");
  EXPECT_TRUE(r.stopped);
  EXPECT_TRUE(matcher.push("x").stopped);
}

TEST(StopMatcher, EveryStreamSplitGivesTheSameText) {
  const std::string text = "abc<stop>tail";
  for (size_t a = 0; a <= text.size(); ++a) {
    for (size_t b = a; b <= text.size(); ++b) {
      StopMatcher matcher({"<stop>", "zz"});
      std::string out;
      bool stopped = false;
      for (auto piece : {text.substr(0, a), text.substr(a, b - a), text.substr(b)}) {
        auto r = matcher.push(piece);
        out += r.emit;
        stopped = stopped || r.stopped;
      }
      EXPECT_TRUE(stopped) << a << "," << b;
      EXPECT_EQ(out, "abc") << a << "," << b;
    }
  }
}

TEST(StopMatcher, HoldsBackAPossibleStopPrefixThenReleasesIt) {
  StopMatcher matcher({"END"});
  EXPECT_EQ(matcher.push("the EN").emit, "the ");
  EXPECT_EQ(matcher.push("ding").emit, "ENding");
  EXPECT_EQ(matcher.push("E").emit, "");
  EXPECT_EQ(matcher.flush(), "E");
}

TEST(StopMatcher, EarliestStopWins) {
  StopMatcher matcher({"bb", "a"});
  auto r = matcher.push("xxabb");
  EXPECT_EQ(r.emit, "xx");
}

}  // namespace
}  // namespace tern::text
