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

// Helpers are started once (fewer when threads cannot be created: the
// calling thread then does more of the work).
class SlicePool {
 public:
  explicit SlicePool(unsigned helpers) {
    try {
      for (unsigned k = 0; k < helpers; ++k) threads_.emplace_back([this] { serve(); });
    } catch (...) {
      // Fewer helpers than asked: the calling thread does the rest.
    }
  }
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

  unsigned threads() const noexcept { return static_cast<unsigned>(threads_.size()) + 1; }

  // Runs fn(0..count-1) on the helpers and the calling thread; returns when
  // all are done and rethrows the first exception.
  void run(std::size_t count, const std::function<void(std::size_t)>& fn) {
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
