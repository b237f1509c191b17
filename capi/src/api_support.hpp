// What every C API entry point shares: the one noexcept exception boundary
// (api_entry), the thread-local error message, and the argument checks that
// run before anything is written. Internal to libmpcf (capi/src only).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "handles.hpp"
#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/matrix_integrate.hpp"
#include "mpcf/core/number_text.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/mpcf.h"

namespace mpcf::capi {

// Records "where: what" as this thread's last error message, and `status`
// with no location as its detail (mpcf_last_error_detail).
void set_last_error(const char* where, const char* what, mpcf_status status) noexcept;
const std::string& last_error() noexcept;
const mpcf_error_detail& last_error_detail() noexcept;

// Maps an exception to a status and records its message.
mpcf_status record_exception(const char* where, const std::exception_ptr& e) noexcept;

// The single exception boundary of the C API.
template <typename Fn>
mpcf_status api_entry(const char* where, Fn&& fn) noexcept {
  try {
    fn();
    return MPCF_OK;
  } catch (...) {
    return record_exception(where, std::current_exception());
  }
}

// The integer value of an enum received from C. C callers may pass any int;
// in C++ a load of an enum object outside its range is undefined, so the
// value is copied out bytewise and only compared as an int.
template <typename E>
int raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int r;
  std::memcpy(&r, &e, sizeof r);
  return r;
}

template <typename P>
void require(const P* ptr, const char* name) {
  if (ptr == nullptr) throw InvalidArgument(std::string("argument '") + name + "' is NULL");
}

void check_dtype(const mpcf_dtype& dtype);
// "float32" or "float64" (core's dtype_name).
const char* dtype_name(mpcf_dtype dtype) noexcept;

// p >= 1 or +inf (NaN and p < 1 rejected).
OperationSpec distance_spec(double p);

// capacity >= needed, and out non-NULL when anything is to be written.
void check_capacity(std::uint64_t needed, std::uint64_t capacity, const void* out,
                    const char* name = "out");

// "piecewise linear functions (PLFs)" or "piecewise constant ...".
const char* function_type_name(mpcf_function_type type) noexcept;
// Both collections hold one function type (InvalidArgument naming both).
void check_same_kind(const mpcf_pcfs* x, const mpcf_pcfs* y);
// check_same_kind, and component axes alike (the same objects to compare).
void check_same_objects(const mpcf_pcfs* x, const mpcf_pcfs* y);
// The same dtype (DtypeMismatch), then check_same_kind.
void check_same_dtype(const mpcf_pcfs* x, const mpcf_pcfs* y);
// For a computation between X and Y: check_same_dtype and check_same_objects.
void check_pair_operands(const mpcf_pcfs* x, const mpcf_pcfs* y);

// index < count(c), else InvalidArgument naming the argument.
void check_index(std::uint64_t index, const mpcf_pcfs* c, const char* name);

const mpcf_options& options_or_default(const mpcf_options* options);

// The options' window [a, b) in the dtype T. Throws InvalidArgument when it
// is empty once rounded to T (e.g. [1, 1 + 1e-12) in float32).
[[noreturn]] void throw_empty_window(double a, double b, const char* dtype);
template <typename T>
Window<T> window_of(const mpcf_options& o) {
  const Window<T> w{static_cast<T>(o.window_a), static_cast<T>(o.window_b)};
  if (!(w.a < w.b)) throw_empty_window(o.window_a, o.window_b, mpcf::dtype_name<T>());
  return w;
}

// The distance (MPCF_METRIC_LP_DISTANCE, p) or inner product of a metric.
OperationSpec cross_spec(const mpcf_metric& metric, double p);

CpuExecutionConfig cpu_config(const mpcf_options& o);
cuda::CudaExecutionConfig cuda_config(const mpcf_options& o);

// The backend decision: the one place that knows both CPU and CUDA. `why`,
// when given, receives the reason (mpcf_task_info.reason).
bool use_cuda(const mpcf_options& o, double mergeSteps, mpcf_backend_reason* why = nullptr);
// What the task info says of work on the CPU (the options' threads, resolved)
// or on CUDA (the options' devices, or all of them).
RunInfo cpu_run(const mpcf_options& o, double mergeSteps, mpcf_backend_reason why);
RunInfo cuda_run(const mpcf_options& o, double mergeSteps, mpcf_backend_reason why);
// The reason of work only the CPU does (the single-pair calls): requested,
// or CPU only.
mpcf_backend_reason cpu_only_reason(const mpcf_options& o) noexcept;

// The request of a computation over X's rows and Y's columns (Y == nullptr:
// the symmetric plane of X), with the options' window in X's dtype.
template <typename T>
PairRequest<T> request_for(const mpcf_pcfs* X, const mpcf_pcfs* Y, OperationSpec spec,
                           const mpcf_options& o, std::shared_ptr<BlockConsumer<T>> consumer) {
  PairRequest<T> r;
  r.x = X->get<T>();
  r.y = Y ? Y->get<T>() : r.x;
  r.symmetric = Y == nullptr;
  r.op = spec;
  r.window = window_of<T>(o);
  r.consumer = std::move(consumer);
  r.components = static_cast<std::uint32_t>(X->components());
  r.linear = X->linear();
  return r;
}

// The work of a request on the backend the options choose; `run` says which
// (mpcf_task_info).
template <typename T>
std::unique_ptr<Work> make_work(PairRequest<T> request, const mpcf_options& o, RunInfo& run) {
  const double steps = request.merge_steps();
  mpcf_backend_reason why = MPCF_REASON_REQUESTED;
  if (use_cuda(o, steps, &why)) {
    run = cuda_run(o, steps, why);
    return cuda::make_work<T>(std::move(request), cuda_config(o));
  }
  run = cpu_run(o, steps, why);
  return make_cpu_work<T>(std::move(request), cpu_config(o));
}

// A task not yet started, and what it runs on.
struct PlannedTask {
  std::unique_ptr<Task> task;
  RunInfo run;
};

// A PlannedTask of the work make(run) returns (make calls make_work).
template <typename Make>
PlannedTask plan(Make make) {
  PlannedTask p;
  p.task = std::make_unique<Task>(make(p.run));
  return p;
}

// Copies `info` and `seconds` into the caller's versioned struct (the first
// min(out->struct_size, sizeof) bytes; struct_size set to that).
void write_task_info(const RunInfo& info, double seconds, mpcf_task_info* out);

// The record of mpcf_last_task_info: every synchronous computation forgets
// the previous one when it begins and records its own once it computed.
void forget_last_run() noexcept;
void record_last_run(const RunInfo& info, double seconds) noexcept;
// mpcf_last_task_info: write_task_info of the record (InvalidArgument: none).
void write_last_run(mpcf_task_info* out);

// The task whose callback a stream's wrapper runs: filled by start_task
// before the task starts (none for a synchronous call, which has no handle).
// A stream started inside callbacks also records the tasks of those
// callbacks (`enclosing`, taken on the starting thread): they wait for it,
// so its callbacks, on whatever worker thread, must not wait for them.
struct CallbackOwner {
  CallbackOwner();
  std::atomic<const mpcf_task*> task{nullptr};
  std::vector<const mpcf_task*> enclosing;
};

// Marks the calling thread as running a callback of `owner`'s task for the
// scope's lifetime (nests: a callback may start another stream).
class CallbackScope {
 public:
  explicit CallbackScope(const CallbackOwner& owner) noexcept;
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  friend bool in_own_callback(const mpcf_task* task) noexcept;
  friend struct CallbackOwner;
  const CallbackOwner* owner_;
  const CallbackScope* outer_;  // the enclosing scope on this thread
};

// True when the calling thread is inside a callback of `task` (at any depth):
// waiting for the task or destroying it there would wait for itself.
bool in_own_callback(const mpcf_task* task) noexcept;

// Starts a task in the background and hands it to the caller; `owner`, if
// given, names the handle before the task can call back.
void start_task(PlannedTask t, mpcf_task** out, CallbackOwner* owner = nullptr);
// Runs a task on the calling thread, records it for mpcf_last_task_info and
// rethrows its failure.
void run_task(PlannedTask t);

}  // namespace mpcf::capi
