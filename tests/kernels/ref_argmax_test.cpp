// ref::ArgmaxFold: candidates folded in any order, singly or as runs, give ref::argmax's choice.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ref/argmax.h"

namespace tern::kernels::ref {
namespace {

// Few distinct values, so ties are everywhere, with NaNs and infinities among them.
std::vector<float> tied_row(int64_t n, std::mt19937& rng) {
  const float inf = std::numeric_limits<float>::infinity();
  const float values[] = {-inf, -1.0f, 0.0f, 2.5f, 2.5f, 3.0f, std::nanf(""), inf};
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(values)) - 2);  // +inf is rare
  std::vector<float> row(static_cast<size_t>(n));
  for (float& v : row) v = values[pick(rng)];
  return row;
}

TEST(ArgmaxFold, RunsInAnyOrderGiveArgmaxsChoice) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t n = 1 + trial % 97;
    std::vector<float> row = tied_row(n, rng);
    if (trial % 50 == 7) row[static_cast<size_t>(n - 1)] = std::numeric_limits<float>::infinity();
    // Cut the row into runs and fold them in a shuffled order.
    std::vector<std::pair<int64_t, int64_t>> runs;
    for (int64_t at = 0; at < n;) {
      const int64_t len = std::min<int64_t>(n - at, 1 + static_cast<int64_t>(rng() % 9));
      runs.emplace_back(at, len);
      at += len;
    }
    std::shuffle(runs.begin(), runs.end(), rng);
    ArgmaxFold by_runs, by_parts;
    for (const auto& [at, len] : runs) {
      ArgmaxFold part;
      part.take_run(row.data() + at, at, len);
      by_parts.take(part);
      by_runs.take_run(row.data() + at, at, len);
    }
    ASSERT_EQ(by_runs.result(), argmax(row.data(), n)) << "trial " << trial;
    ASSERT_EQ(by_parts.result(), argmax(row.data(), n)) << "trial " << trial;
  }
}

TEST(ArgmaxFold, NanRowPicksZeroAndInfinityTies) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> nans = {nan, nan, nan};
  ArgmaxFold fold;
  fold.take_run(nans.data(), 0, 3);
  EXPECT_EQ(fold.result(), 0);
  const std::vector<float> infs = {nan, -inf, -inf};
  ArgmaxFold late;
  late.take_run(infs.data() + 2, 2, 1);
  late.take_run(infs.data(), 0, 2);
  EXPECT_EQ(late.result(), argmax(infs.data(), 3));
  EXPECT_EQ(late.result(), 1);
}

}  // namespace
}  // namespace tern::kernels::ref
