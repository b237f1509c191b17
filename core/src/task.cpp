#include "mpcf/core/task.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace mpcf {

Task::Task(std::unique_ptr<Work> work) : work_(std::move(work)) {}

Task::~Task() {
  control_.request_cancel();
  if (thread_.joinable()) thread_.join();
}

namespace {
// The testing hook of mpcf.h: MPCF_DEBUG_HOLD_TASKS unset, "" or "0": none;
// "until_wait": hold until waited for; any other value: until cancelled.
Task::Hold hold_requested() {
  const char* v = std::getenv("MPCF_DEBUG_HOLD_TASKS");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0) return Task::Hold::None;
  if (std::strcmp(v, "until_wait") == 0) return Task::Hold::UntilWaited;
  return Task::Hold::UntilCancelled;
}
}  // namespace

void Task::start() {
  hold_ = hold_requested();
  started_ = std::chrono::steady_clock::now();
  try {
    thread_ = std::thread([this] { execute(); });
  } catch (const std::system_error&) {
    throw OutOfMemory("could not start the task's thread");
  }
}

void Task::run_here() {
  started_ = std::chrono::steady_clock::now();
  execute();
}

void Task::execute() noexcept {
  std::exception_ptr error;
  try {
    if (hold_ == Hold::UntilCancelled) {
      // Computes nothing until cancelled (a test hook, see mpcf.h).
      while (!control_.cancel_requested()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      throw Cancelled();
    }
    if (hold_ == Hold::UntilWaited) {
      // Starts only once waited for (a test hook, see mpcf.h); a cancel
      // also ends the hold (cancel() does not notify: poll it).
      std::unique_lock<std::mutex> lock(mutex_);
      while (!waited_ && !control_.cancel_requested()) {
        waited_cv_.wait_for(lock, std::chrono::milliseconds(1));
      }
    }
    work_->run(control_);
  } catch (...) {
    error = std::current_exception();
    work_->discard_output();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = error;
    finished_ = std::chrono::steady_clock::now();
    state_ = error ? State::Failed : State::Succeeded;
  }
  finished_cv_.notify_all();
}

bool Task::wait_for(double seconds) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!waited_) {
    waited_ = true;
    waited_cv_.notify_all();
  }
  auto finished = [this] { return state_ != State::Running; };
  if (seconds < 0) {
    finished_cv_.wait(lock, finished);
    return true;
  }
  // Cap very long timeouts so the duration arithmetic cannot overflow.
  const double capped = seconds > 1e9 ? 1e9 : seconds;
  return finished_cv_.wait_for(lock, std::chrono::duration<double>(capped), finished);
}

Task::State Task::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

double Task::seconds() const {
  if (started_ == std::chrono::steady_clock::time_point{}) return 0.0;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto end = state_ == State::Running ? std::chrono::steady_clock::now() : finished_;
  return std::chrono::duration<double>(end - started_).count();
}

std::exception_ptr Task::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace mpcf
