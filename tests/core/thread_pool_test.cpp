#include "core/thread_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
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

TEST(ThreadPool, GuidedRangesCoverEveryIndexOnceAndShrink) {
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    for (int64_t count : {0, 1, 2, 5, 97, 2176}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      std::atomic<int64_t> ranges{0}, shortest{count};
      pool.for_ranges_guided(count, 2, [&](int64_t begin, int64_t end, int thread) {
        ASSERT_LT(begin, end);
        ASSERT_TRUE(thread >= 0 && thread < threads);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        ranges.fetch_add(1);
        for (int64_t s = shortest.load();
             end - begin < s && !shortest.compare_exchange_weak(s, end - begin);) {
        }
      });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "threads " << threads << " count " << count;
      if (count >= 97) {  // guided, not one range per thread: the last ranges are at the minimum
        EXPECT_GT(ranges.load(), 2 * threads) << "threads " << threads << " count " << count;
        EXPECT_LE(shortest.load(), 2) << "threads " << threads << " count " << count;
      }
    }
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

TEST(ThreadPool, RejectsCountsOutsideOneToItsMaximum) {
  for (const int threads : {0, -1, ThreadPool::kMaxThreads + 1, 100000}) {
    try {
      ThreadPool pool(threads);
      ADD_FAILURE() << threads << " threads accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_NE(std::string(e.what()).find("thread count must be 1 to 1024, got " + std::to_string(threads)),
                std::string::npos)
          << e.what();
    }
  }
}

// Where the system refuses a thread, the pool joins the ones it started and throws: before, their
// std::thread objects were destroyed joinable and the process ended in std::terminate. Run in a child
// whose address space is capped, so that thread stacks run out after a few.
TEST(ThreadPool, ThreadsTheSystemRefusesAreAnErrorNotAnAbort) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's shadow memory needs more address space than the cap leaves";
#else
  enum : int { kCleanError = 0, kLimitIgnored = 2, kWrongError = 3 };
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long pages = 0;
    if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
      std::fclose(statm);
    }
    const rlim_t cap =
        static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{24} << 20);
    const rlimit limit{cap, cap};
    if (pages == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(kLimitIgnored);
    try {
      ThreadPool pool(256);
      _exit(kLimitIgnored);  // an emulator (qemu-user) may not apply the cap
    } catch (const Error& e) {
      const bool named = std::string(e.what()).find("cannot start thread") != std::string::npos;
      _exit(e.kind() == ErrorKind::kCapacity && named ? kCleanError : kWrongError);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == kLimitIgnored) GTEST_SKIP() << "the address-space cap is not applied here";
  EXPECT_EQ(WEXITSTATUS(status), kCleanError);
#endif
}

// Each thread of a pinned pool of `threads` reports the one CPU it may run on (-1 where it may run on
// several). Called on a thread of its own: the pool pins whichever thread calls run, and the test runner's
// must stay free.
std::vector<int> pinned_cpus(int threads) {
  ThreadPool pool(threads, /*pin=*/true);
  std::atomic<int> arrived{0};
  std::vector<int> cpu_of(static_cast<size_t>(threads), -1);
  pool.for_each(threads, [&](int64_t, int thread) {
    arrived.fetch_add(1);
    // Every thread holds a task at once, so each reports its own affinity.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    if (CPU_COUNT(&set) == 1) {
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpu_of[static_cast<size_t>(thread)] = c;
    }
  });
  EXPECT_EQ(arrived.load(), threads);
  return cpu_of;
}

TEST(ThreadPool, PinnedThreadsRunOnlyOnTheirCpu) {
  const std::vector<int>& allowed = ThreadPool::allowed_cpus();
  std::thread([&] {
    const std::vector<int> cpu_of = pinned_cpus(2);
    EXPECT_EQ(cpu_of[0], allowed[0]);
    EXPECT_EQ(cpu_of[1], allowed[1 % allowed.size()]);
    // The first pool pinned this thread to one CPU: a second pool built on it still takes the process's
    // CPUs (before, `tern bench -t 1,2 --pin` put the second count's threads on that one CPU).
    EXPECT_EQ(pinned_cpus(2), cpu_of);
  }).join();
}

}  // namespace
}  // namespace tern
