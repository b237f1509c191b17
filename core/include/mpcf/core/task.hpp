// Background tasks with progress (done / total), cancellation and error
// propagation. A Task owns a Work object and one coordinator thread that runs
// it; the Work may start its own workers. Destroying a Task cancels it and
// joins, so no thread outlives the objects it uses.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "mpcf/core/errors.hpp"

namespace mpcf {

// What a running Work sees: progress counters and the cancel flag.
class TaskControl {
 public:
  void set_total(std::uint64_t total) { total_.store(total, std::memory_order_relaxed); }
  void add_done(std::uint64_t n) { done_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t done() const { return done_.load(std::memory_order_relaxed); }
  std::uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  void request_cancel() { cancel_.store(true, std::memory_order_relaxed); }
  bool cancel_requested() const { return cancel_.load(std::memory_order_relaxed); }
  void throw_if_cancelled() const {
    if (cancel_requested()) throw Cancelled();
  }

 private:
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> total_{0};
  std::atomic<bool> cancel_{false};
};

class Work {
 public:
  virtual ~Work() = default;
  // Computes the result; throws on failure (Cancelled when cancelled).
  virtual void run(TaskControl& control) = 0;
  // Called after run() threw: leave no partial result behind.
  virtual void discard_output() noexcept = 0;
};

class Task {
 public:
  enum class State { Running, Succeeded, Failed };
  // The testing hook MPCF_DEBUG_HOLD_TASKS (mpcf.h), read when started:
  // UntilCancelled computes nothing and waits for a cancel; UntilWaited
  // ("until_wait") starts computing only once someone waits for the task
  // (or cancels it), so a test can act between the start and the work.
  enum class Hold { None, UntilCancelled, UntilWaited };

  explicit Task(std::unique_ptr<Work> work);
  ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  void start();
  void cancel() { control_.request_cancel(); }
  // True when finished within `seconds` (negative: wait for ever).
  bool wait_for(double seconds);
  State state() const;
  // The exception the work ended with (null unless Failed).
  std::exception_ptr error() const;
  std::uint64_t done() const { return control_.done(); }
  std::uint64_t total() const { return control_.total(); }
  // Wall-clock seconds from start() (or run_here()) until the task finished;
  // while it runs, until now; 0 before it starts.
  double seconds() const;

  // Runs the work on the calling thread (no coordinator thread).
  void run_here();

 private:
  void execute() noexcept;

  std::unique_ptr<Work> work_;
  TaskControl control_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable finished_cv_;
  State state_ = State::Running;
  std::exception_ptr error_;
  Hold hold_ = Hold::None;
  bool waited_ = false;  // guarded by mutex_
  std::chrono::steady_clock::time_point started_{};   // set before the work starts
  std::chrono::steady_clock::time_point finished_{};  // guarded by mutex_
  std::condition_variable waited_cv_;
};

// Runs fn(workerIndex) on `threads` threads (the calling thread is one of
// them) and rethrows the first exception after all have stopped. On an
// exception, `control` is cancelled so the other workers stop early.
template <typename Fn>
void run_on_threads(int threads, TaskControl& control, Fn fn);

}  // namespace mpcf

#include "mpcf/core/task_impl.hpp"
