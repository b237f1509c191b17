// Template part of task.hpp.
#pragma once

#include <vector>

namespace mpcf {

template <typename Fn>
void run_on_threads(int threads, TaskControl& control, Fn fn) {
  if (threads < 1) threads = 1;
  std::mutex errorMutex;
  std::exception_ptr firstError;
  auto guarded = [&](int w) {
    try {
      fn(w);
    } catch (...) {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!firstError) firstError = std::current_exception();
      control.request_cancel();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int w = 1; w < threads; ++w) pool.emplace_back(guarded, w);
  } catch (...) {
    // Could not start every thread: stop the ones that run, then report.
    control.request_cancel();
    for (auto& th : pool) th.join();
    throw OutOfMemory("could not start the worker threads");
  }
  guarded(0);
  for (auto& th : pool) th.join();
  if (firstError) std::rethrow_exception(firstError);
}

}  // namespace mpcf
