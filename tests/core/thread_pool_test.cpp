#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "core/error.h"

namespace tern {
namespace {

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::atomic<int>> hits(97);
    pool.for_each(97, [&](int64_t i, int) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, ThreadIndicesAreInRange) {
  ThreadPool pool(2);
  std::atomic<int> bad{0};
  pool.for_each(1000, [&](int64_t, int t) { bad += (t < 0 || t >= 2); });
  EXPECT_EQ(bad.load(), 0);
}

TEST(ThreadPool, SingleThreadRunsInline) {
  ThreadPool pool(1);
  int64_t sum = 0;
  pool.for_each(10, [&](int64_t i, int) { sum += i; });
  EXPECT_EQ(sum, 45);
}

TEST(ThreadPool, RejectsZeroThreads) {
  EXPECT_THROW(ThreadPool(0), Error);
}

}  // namespace
}  // namespace tern
