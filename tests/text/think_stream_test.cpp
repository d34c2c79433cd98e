#include "text/think_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tern::text {
namespace {

struct Piece {
  std::string text;
  bool reasoning;
  bool operator==(const Piece&) const = default;
};

TEST(ThinkStream, SplitsReasoningFromContentAcrossDeltas) {
  ThinkStream stream(/*in_reasoning=*/true);
  std::vector<Piece> pieces;
  const ThinkStream::Sink sink = [&](std::string_view text, bool reasoning) {
    pieces.push_back({std::string(text), reasoning});
  };
  for (const char* delta : {"let me ", "think</th", "ink>\n\nThe answer", " is <", "b>"})
    stream.feed(delta, sink);
  stream.finish(sink);
  EXPECT_EQ(stream.reasoning(), "let me think");
  EXPECT_EQ(stream.content(), "\n\nThe answer is <b>");
  // "</th" was held back until the tag completed; "<" until it could no longer start "<think>".
  EXPECT_EQ(
      pieces,
      (std::vector<Piece>{
          {"let me ", true}, {"think", true}, {"\n\nThe answer", false}, {" is ", false}, {"<b>", false}}));
}

TEST(ThinkStream, OpensAThinkBlockTheModelWrites) {
  ThinkStream stream(/*in_reasoning=*/false);
  const ThinkStream::Sink ignore = [](std::string_view, bool) {};
  stream.feed("<think>hm</think>ok <thi", ignore);
  stream.finish(ignore);
  EXPECT_EQ(stream.reasoning(), "hm");
  EXPECT_EQ(stream.content(), "ok <thi");
}

TEST(ThinkStream, FindsAnOpenThinkBlockAtThePromptEnd) {
  EXPECT_TRUE(ends_in_think_block("<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(ends_in_think_block("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(ends_in_think_block("<|im_start|>assistant\n"));
}

}  // namespace
}  // namespace tern::text
