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
#include "mpcf/core/operations.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/mpcf.h"

namespace mpcf::capi {

// Records "where: what" as this thread's last error message.
void set_last_error(const char* where, const char* what) noexcept;
const std::string& last_error() noexcept;

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
  if (!(w.a < w.b)) throw_empty_window(o.window_a, o.window_b, sizeof(T) == 4 ? "float32" : "float64");
  return w;
}

// The distance (MPCF_METRIC_LP_DISTANCE, p) or inner product of a metric.
OperationSpec cross_spec(const mpcf_metric& metric, double p);

CpuExecutionConfig cpu_config(const mpcf_options& o);
cuda::CudaExecutionConfig cuda_config(const mpcf_options& o);

// The backend decision: the one place that knows both CPU and CUDA.
bool use_cuda(const mpcf_options& o, double mergeSteps);
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

// The work of a request on the backend the options choose.
template <typename T>
std::unique_ptr<Work> make_work(PairRequest<T> request, const mpcf_options& o) {
  if (use_cuda(o, request.merge_steps())) return cuda::make_work<T>(std::move(request), cuda_config(o));
  return make_cpu_work<T>(std::move(request), cpu_config(o));
}

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
void start_task(std::unique_ptr<Task> t, mpcf_task** out, CallbackOwner* owner = nullptr);
// Runs a task on the calling thread and rethrows its failure.
void run_task(std::unique_ptr<Task> t);

}  // namespace mpcf::capi
