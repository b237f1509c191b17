// SlicePool: a fixed team of helper threads that run the slices of one job
// together with the calling thread (the pipeline's scatter of downloaded
// blocks, the host copies of the resident upload). Plain C++.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mpcf::cuda::detail {

// Helpers are started once, by the first job of more than one slice (a
// pool that never gets one, e.g. a pipeline whose stage downloads nothing,
// starts no thread); fewer when threads cannot be created: the calling
// thread then does more of the work.
class SlicePool {
 public:
  explicit SlicePool(unsigned helpers) : helpers_(helpers) {}
  ~SlicePool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  SlicePool(const SlicePool&) = delete;
  SlicePool& operator=(const SlicePool&) = delete;

  // The calling thread and the helpers (those to be started included).
  unsigned threads() const noexcept {
    return (started_ ? static_cast<unsigned>(threads_.size()) : helpers_) + 1;
  }

  // Runs fn(0..count-1) on the helpers and the calling thread; returns when
  // all are done and rethrows the first exception.
  void run(std::size_t count, const std::function<void(std::size_t)>& fn) {
    if (count > 1 && !started_) start();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      count_ = count;
      next_ = 0;
      finished_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return finished_ == threads_.size(); });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void start() {
    started_ = true;
    try {
      for (unsigned k = 0; k < helpers_; ++k) threads_.emplace_back([this] { serve(); });
    } catch (...) {
      // Fewer helpers than asked: the calling thread does the rest.
    }
  }
  void work() {
    for (;;) {
      const std::size_t k = next_.fetch_add(1);
      if (k >= count_) return;
      try {
        (*job_)(k);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }
  void serve() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++finished_;
      }
      done_.notify_one();
    }
  }

  unsigned helpers_;
  bool started_ = false;  // run() only: one caller at a time
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  std::size_t finished_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace mpcf::cuda::detail
