#include "core/thread_pool.hpp"

#include <algorithm>

namespace fleetsim {

ThreadPool::ThreadPool(int threads) {
  int extra = std::max(1, threads) - 1;
  workers_.reserve(extra);
  for (int i = 0; i < extra; ++i) workers_.emplace_back([this, i] { worker_main(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true);
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::execute(int worker) {
  while (true) {
    std::size_t begin = next_.fetch_add(block_, std::memory_order_relaxed);
    if (begin >= count_) break;
    std::size_t end = std::min(count_, begin + block_);
    try {
      (*body_)(begin, end, worker);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_ || begin < error_begin_) {
        error_ = std::current_exception();
        error_begin_ = begin;
      }
    }
  }
}

namespace {
/// How long to spin before sleeping: about 20-100 microseconds, depending on the CPU.
constexpr int kSpinIterations = 2000;
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

void ThreadPool::worker_main(int index) {
  std::uint64_t seen = 0;
  while (true) {
    for (int spin = 0; spin < kSpinIterations; ++spin) {
      if (generation_.load(std::memory_order_acquire) != seen || stop_.load()) break;
      cpu_relax();
    }
    if (generation_.load(std::memory_order_acquire) == seen && !stop_.load()) {
      std::unique_lock lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    execute(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(std::size_t count, std::size_t grain,
                              const std::function<void(std::size_t, std::size_t, int)>& body) {
  if (count == 0) return;
  error_ = nullptr;
  std::size_t threads = static_cast<std::size_t>(size());
  // Several blocks per worker balance uneven work; `grain` keeps blocks worth a wake-up.
  std::size_t block = std::max<std::size_t>(std::max<std::size_t>(grain, 1),
                                            (count + threads * 8 - 1) / (threads * 8));
  if (workers_.empty() || count <= block) {
    body(0, count, 0);
    return;
  }
  body_ = &body;
  count_ = count;
  block_ = block;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_cv_.notify_all();
  execute(0);
  for (int spin = 0; spin < kSpinIterations; ++spin) {
    if (pending_.load(std::memory_order_acquire) == 0) break;
    cpu_relax();
  }
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }
  body_ = nullptr;
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::run_on_all(const std::function<void(int)>& body) {
  std::size_t n = static_cast<std::size_t>(size());
  parallel_for(n * 1, 1, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i) body(static_cast<int>(i));
  });
}

}  // namespace fleetsim
