// A persistent pool of worker threads for the token loop. Dispatch and completion go through atomics
// (C++20 atomic wait/notify, a futex on Linux): no locks, no allocation per job. The calling thread
// takes part, so a pool of n threads has n-1 workers.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace tern {

class ThreadPool {
 public:
  // fn(ctx, index, thread) is called once for every index in [0, count).
  using Task = void (*)(void* ctx, int64_t index, int thread);

  // More threads than any machine tern runs on has cores: a count above it is a mistake, and near the
  // system's own limit (tens of thousands) starting them fails.
  static constexpr int kMaxThreads = 1024;

  // The CPUs the process may run on, in order: its affinity mask (a container's cpuset, taskset) when
  // first asked, before any pool pinned the asking thread to one of them; CPUs 0..n-1 of the n online
  // where the mask cannot be read.
  static const std::vector<int>& allowed_cpus();
  // A thread count as options give it: 0 is every allowed CPU (at least 1).
  static int resolve(int threads);

  // pin: thread t (0 = the caller of run) runs only on the (t mod n)-th of the n allowed_cpus(). Throws
  // Error for a count outside [1, kMaxThreads], when the system cannot start a thread (the ones started
  // are joined) or when a thread cannot be pinned (kInput; run throws it for the caller).
  explicit ThreadPool(int threads, bool pin = false);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn over [0, count), indices claimed dynamically; returns when all are done.
  void run(int64_t count, Task fn, void* ctx);

  // Convenience for lambdas; the lambda lives on the caller's stack (no allocation).
  template <class F>
  void for_each(int64_t count, F&& f) {
    auto trampoline = [](void* ctx, int64_t index, int thread) { (*static_cast<F*>(ctx))(index, thread); };
    run(count, trampoline, &f);
  }

  // f(begin, end, thread) over [0, count) in guided ranges: each claim takes a 1/(2·size()) share of
  // what is left, at least min_range, so the last ranges are short and a thread that lags, or that the
  // OS pauses, leaves the others little to wait for at the end.
  template <class F>
  void for_ranges_guided(int64_t count, int64_t min_range, F&& f) {
    const int64_t shares = 2 * int64_t{size()};
    std::atomic<int64_t> next{0};
    for_each(size(), [&](int64_t, int thread) {
      for (int64_t at = next.load(std::memory_order_relaxed); at < count;) {
        const int64_t end = std::min(count, at + std::max(min_range, (count - at + shares - 1) / shares));
        if (next.compare_exchange_weak(at, end, std::memory_order_relaxed)) {
          f(at, end, thread);
          at = next.load(std::memory_order_relaxed);
        }
      }
    });
  }

 private:
  void worker_loop(int thread);
  void work(int thread);
  void stop_workers();

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int64_t> next_{0};
  std::atomic<int> busy_{0};
  std::atomic<bool> stop_{false};
  std::vector<int> cpu_of_thread_;    // thread t's CPU; empty when the pool is not pinned
  std::chrono::nanoseconds spin_{0};  // how long a waiting thread spins before it sleeps
  int64_t count_ = 0;
  Task fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace tern
