// A fixed pool of worker threads, created once at the start of a run (scatter-gather).
//
// Every phase of the step is a parallel_for over it. Work items write only what they own (a
// robot's own columns), so the result never depends on which worker ran which item or in
// which order they finished. The calling thread works too: a pool of size 1 has no extra
// thread and runs everything inline.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fleetsim {

class ThreadPool {
 public:
  /// `threads` >= 1 workers in total, including the caller of parallel_for.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls body(begin, end, worker) over disjoint ranges covering [0, count), in blocks of
  /// at least `grain` items, dynamically shared among workers. Blocks until all are done. If a
  /// body throws, the exception of the lowest failing range is rethrown here after all
  /// workers stopped (so the reported failure does not depend on timing).
  void parallel_for(std::size_t count, std::size_t grain,
                    const std::function<void(std::size_t, std::size_t, int)>& body);

  /// Runs body(worker) once on every worker (0..size()-1) and waits.
  void run_on_all(const std::function<void(int)>& body);

 private:
  void worker_main(int index);
  void execute(int worker);

  std::vector<std::thread> workers_;
  // Phases follow each other within microseconds, so workers and the caller first spin a
  // little on these atomics, and only then sleep on the condition variables (a futex wake-up
  // costs tens of microseconds, a few times per tick).
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  std::atomic<std::uint64_t> generation_{0};  ///< incremented (under mutex_) per job
  std::atomic<int> pending_{0};               ///< workers still running the job
  std::atomic<bool> stop_{false};

  // Current job.
  const std::function<void(std::size_t, std::size_t, int)>* body_ = nullptr;
  std::size_t count_ = 0;
  std::size_t block_ = 1;
  std::atomic<std::size_t> next_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::size_t error_begin_ = 0;
};

}  // namespace fleetsim
