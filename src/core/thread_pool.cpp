#include "core/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "core/error.h"

namespace tern {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a thread spins before it sleeps on the futex. A decode token dispatches ~400 jobs, with
// single-threaded gaps of up to ~60 µs between them (norms, transforms, the conv); a worker asleep
// across a gap wakes late (a futex wake takes 10-100 µs in a VM, whose idle vCPU halts), and its share
// then falls on the caller: ≈ 2% of a token on the 27B. So a worker spins 250 µs, longer than any gap
// in a token, unless the pool has more threads than the machine has CPUs: spinning workers would
// then take the CPU from the threads doing the work, so they spin only about as long as a futex round trip.
constexpr auto kSpinWhenCpusSuffice = std::chrono::microseconds(250);
constexpr auto kSpinWhenOversubscribed = std::chrono::microseconds(20);

// Spins (with a pause, which also tells a hypervisor the vCPU is waiting) until done() or `budget` has
// passed; the clock is read every 64 pauses.
template <class Done>
void spin_until(Done done, std::chrono::nanoseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
  }
}

// A CPU set sized for `cpus` CPUs (glibc's cpu_set_t holds 1,024).
struct CpuSet {
  explicit CpuSet(int cpus) : set(CPU_ALLOC(cpus)), bytes(CPU_ALLOC_SIZE(cpus)) {
    if (set == nullptr) fail(ErrorKind::kCapacity, "cannot allocate a set of {} CPUs", cpus);
    CPU_ZERO_S(bytes, set);
  }
  ~CpuSet() { CPU_FREE(set); }
  CpuSet(const CpuSet&) = delete;
  CpuSet& operator=(const CpuSet&) = delete;

  cpu_set_t* set;
  size_t bytes;
};

void pin_to_cpu(pthread_t thread, int pool_thread, int cpu) {
  CpuSet one(cpu + 1);
  CPU_SET_S(static_cast<size_t>(cpu), one.bytes, one.set);
  if (const int error = pthread_setaffinity_np(thread, one.bytes, one.set); error != 0) {
    fail(ErrorKind::kInput, "cannot pin pool thread {} to CPU {}: {}", pool_thread, cpu,
         std::system_category().message(error));
  }
}

// The calling thread's affinity mask; empty where it cannot be read. The set grows until it holds the
// kernel's possible CPUs (sched_getaffinity refuses a smaller one).
std::vector<int> read_affinity() {
  std::vector<int> cpus;
  for (int size = CPU_SETSIZE; size <= (1 << 20); size *= 2) {
    CpuSet mask(size);
    if (sched_getaffinity(0, mask.bytes, mask.set) == 0) {
      for (int cpu = 0; cpu < size; ++cpu)
        if (CPU_ISSET_S(static_cast<size_t>(cpu), mask.bytes, mask.set)) cpus.push_back(cpu);
      return cpus;
    }
    if (errno != EINVAL) break;
  }
  return cpus;
}

}  // namespace

const std::vector<int>& ThreadPool::allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> mask = read_affinity();
    if (mask.empty()) {  // unreadable: every CPU, without pinning's promise of which
      mask.resize(static_cast<size_t>(std::max(1, static_cast<int>(std::thread::hardware_concurrency()))));
      for (size_t cpu = 0; cpu < mask.size(); ++cpu) mask[cpu] = static_cast<int>(cpu);
    }
    return mask;
  }();
  return cpus;
}

int ThreadPool::resolve(int threads) {
  return threads > 0 ? threads : static_cast<int>(allowed_cpus().size());
}

ThreadPool::ThreadPool(int threads, bool pin) {
  if (threads < 1 || threads > kMaxThreads)
    fail(ErrorKind::kInput, "thread count must be 1 to {}, got {}", kMaxThreads, threads);
  const std::vector<int>& allowed = allowed_cpus();
  spin_ = static_cast<size_t>(threads) <= allowed.size() ? kSpinWhenCpusSuffice : kSpinWhenOversubscribed;
  if (pin) {
    for (int t = 0; t < threads; ++t)
      cpu_of_thread_.push_back(allowed[static_cast<size_t>(t) % allowed.size()]);
  }
  workers_.reserve(static_cast<size_t>(threads - 1));
  try {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
  } catch (const std::system_error& e) {
    // A joinable std::thread destroyed unjoined ends the process: join the started ones first.
    const size_t started = workers_.size();
    stop_workers();
    fail(ErrorKind::kCapacity, "cannot start thread {} of {}: {}", started + 2, threads, e.what());
  }
  try {
    for (size_t t = 1; t < cpu_of_thread_.size(); ++t)
      pin_to_cpu(workers_[t - 1].native_handle(), static_cast<int>(t), cpu_of_thread_[t]);
  } catch (const Error&) {
    stop_workers();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  stop_workers();
}

void ThreadPool::stop_workers() {
  stop_.store(true, std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

void ThreadPool::run(int64_t count, Task fn, void* ctx) {
  if (count <= 0) return;
  // The caller is thread 0, pinned on its first job: the thread that steps the engine need not be the
  // one that built the pool (the server builds it on main and steps it on its scheduler thread).
  thread_local const ThreadPool* pinned_for = nullptr;
  if (!cpu_of_thread_.empty() && pinned_for != this) {
    pin_to_cpu(pthread_self(), 0, cpu_of_thread_.front());
    pinned_for = this;
  }
  if (workers_.empty() || count == 1) {
    for (int64_t i = 0; i < count; ++i) fn(ctx, i, 0);
    return;
  }
  count_ = count;
  fn_ = fn;
  ctx_ = ctx;
  next_.store(0, std::memory_order_relaxed);
  busy_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  epoch_.notify_all();
  work(0);
  // Wait for the workers to leave the job (they may still be finishing their last index).
  spin_until([this] { return busy_.load(std::memory_order_acquire) == 0; }, spin_);
  for (int b = busy_.load(std::memory_order_acquire); b != 0; b = busy_.load(std::memory_order_acquire)) {
    busy_.wait(b, std::memory_order_acquire);
  }
}

void ThreadPool::work(int thread) {
  for (int64_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    fn_(ctx_, i, thread);
  }
}

void ThreadPool::worker_loop(int thread) {
  uint64_t seen = 0;
  for (;;) {
    spin_until([&] { return epoch_.load(std::memory_order_acquire) != seen; }, spin_);
    uint64_t now = epoch_.load(std::memory_order_acquire);
    while (now == seen) {
      epoch_.wait(seen, std::memory_order_acquire);
      now = epoch_.load(std::memory_order_acquire);
    }
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    work(thread);
    if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_.notify_one();
  }
}

}  // namespace tern
