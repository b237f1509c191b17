#include "api_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <sstream>

namespace mpcf::capi {

namespace {
thread_local std::string t_last_error;
thread_local mpcf_error_detail t_last_detail = {sizeof(mpcf_error_detail), MPCF_OK, -1, -1, -1, -1};

mpcf_status status_of(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument: return MPCF_ERROR_INVALID_ARGUMENT;
    case ErrorKind::InvalidPcf: return MPCF_ERROR_INVALID_PCF;
    case ErrorKind::BufferTooSmall: return MPCF_ERROR_BUFFER_TOO_SMALL;
    case ErrorKind::DtypeMismatch: return MPCF_ERROR_DTYPE_MISMATCH;
    case ErrorKind::OutOfMemory: return MPCF_ERROR_OUT_OF_MEMORY;
    case ErrorKind::CudaUnavailable: return MPCF_ERROR_CUDA_UNAVAILABLE;
    case ErrorKind::Cuda: return MPCF_ERROR_CUDA;
    case ErrorKind::Cancelled: return MPCF_ERROR_CANCELLED;
    case ErrorKind::Internal: return MPCF_ERROR_INTERNAL;
  }
  return MPCF_ERROR_INTERNAL;
}
}  // namespace

void set_last_error(const char* where, const char* what, mpcf_status status) noexcept {
  t_last_detail = mpcf_error_detail{sizeof(mpcf_error_detail), status, -1, -1, -1, -1};
  try {
    t_last_error.assign(where);
    t_last_error.append(": ");
    t_last_error.append(what);
  } catch (...) {
    // Out of memory while recording the message: keep whatever is there.
  }
}

const std::string& last_error() noexcept { return t_last_error; }

const mpcf_error_detail& last_error_detail() noexcept { return t_last_detail; }

mpcf_status record_exception(const char* where, const std::exception_ptr& e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    const mpcf_status status = status_of(err.kind());
    set_last_error(where, err.what(), status);
    const ErrorLocation& at = err.location();
    t_last_detail.function_index = at.function;
    t_last_detail.breakpoint_index = at.breakpoint;
    t_last_detail.barcode_index = at.barcode;
    t_last_detail.bar_index = at.bar;
    return status;
  } catch (const std::bad_alloc&) {
    set_last_error(where, "out of host memory", MPCF_ERROR_OUT_OF_MEMORY);
    return MPCF_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& err) {
    set_last_error(where, err.what(), MPCF_ERROR_INTERNAL);
    return MPCF_ERROR_INTERNAL;
  } catch (...) {
    set_last_error(where, "unknown internal error", MPCF_ERROR_INTERNAL);
    return MPCF_ERROR_INTERNAL;
  }
}

void check_dtype(const mpcf_dtype& dtype) {
  const int d = raw_enum(dtype);
  if (d != MPCF_FLOAT32 && d != MPCF_FLOAT64) {
    throw InvalidArgument("dtype " + std::to_string(d) +
                          " is neither MPCF_FLOAT32 (1) nor MPCF_FLOAT64 (2)");
  }
}

const char* dtype_name(mpcf_dtype dtype) noexcept {
  return dtype == MPCF_FLOAT32 ? mpcf::dtype_name<float>() : mpcf::dtype_name<double>();
}

OperationSpec distance_spec(double p) {
  if (std::isnan(p) || p < 1.0) {
    std::ostringstream os;
    os << "p = " << p << " is not a valid exponent; p must be >= 1 (or INFINITY)";
    throw InvalidArgument(os.str());
  }
  return OperationSpec::distance(p);
}

void check_capacity(std::uint64_t needed, std::uint64_t capacity, const void* out,
                    const char* name) {
  if (capacity < needed) {
    throw BufferTooSmall(std::string("the output buffer '") + name + "' holds " +
                         std::to_string(capacity) + " elements but the result needs " +
                         std::to_string(needed));
  }
  if (needed > 0 && out == nullptr) throw InvalidArgument(std::string("argument '") + name + "' is NULL");
}

const char* function_type_name(mpcf_function_type type) noexcept {
  return type == MPCF_PIECEWISE_LINEAR ? "piecewise linear functions (PLFs)"
                                       : "piecewise constant functions (PCFs)";
}

void check_same_kind(const mpcf_pcfs* x, const mpcf_pcfs* y) {
  if (x->type != y->type) {
    throw InvalidArgument(std::string("X holds ") + function_type_name(x->type) + " but Y holds " +
                          function_type_name(y->type) +
                          "; one call computes between collections of one kind");
  }
}

void check_same_objects(const mpcf_pcfs* x, const mpcf_pcfs* y) {
  check_same_kind(x, y);
  if (x->component_axis != y->component_axis || x->components() != y->components()) {
    auto describe = [](const mpcf_pcfs* c) {
      return c->component_axis ? "objects of " + std::to_string(c->components()) + " components"
                               : std::string("single functions (no component axis)");
    };
    throw InvalidArgument("X holds " + describe(x) + " but Y holds " + describe(y) +
                          "; both collections must have the same component axis");
  }
}

void check_same_dtype(const mpcf_pcfs* x, const mpcf_pcfs* y) {
  if (x->dtype != y->dtype) {
    throw DtypeMismatch(std::string("X has dtype ") + dtype_name(x->dtype) + " but Y has dtype " +
                        dtype_name(y->dtype) + "; both collections must share one dtype");
  }
  check_same_kind(x, y);
}

void check_pair_operands(const mpcf_pcfs* x, const mpcf_pcfs* y) {
  check_same_dtype(x, y);
  check_same_objects(x, y);
}

void check_index(std::uint64_t index, const mpcf_pcfs* c, const char* name) {
  if (index >= c->objects()) {
    throw InvalidArgument(std::string("index ") + name + " = " + std::to_string(index) +
                          " is out of range for a collection of " + std::to_string(c->objects()) +
                          (c->component_axis ? " objects" : " functions"));
  }
}

const mpcf_options& options_or_default(const mpcf_options* options) {
  static const mpcf_options defaults{};
  return options ? *options : defaults;
}

void throw_empty_window(double a, double b, const char* dtype) {
  std::ostringstream os;
  os.precision(17);
  os << "window [" << a << ", " << b << ") is empty in " << dtype
     << " (its ends round to the same value, or overflow); widen it or use float64 data";
  throw InvalidArgument(os.str());
}

OperationSpec cross_spec(const mpcf_metric& metric, double p) {
  switch (raw_enum(metric)) {
    case MPCF_METRIC_LP_DISTANCE: return distance_spec(p);
    case MPCF_METRIC_L2_KERNEL: return OperationSpec::l2_kernel();
  }
  throw InvalidArgument("metric " + std::to_string(raw_enum(metric)) +
                        " is not an mpcf_metric value");
}

CpuExecutionConfig cpu_config(const mpcf_options& o) {
  CpuExecutionConfig c;
  c.threads = o.threads;
  c.maxBlockElements = o.max_block_elements;
  c.splitHint = o.split_hint;
  c.minBlockSide = o.min_block_side;
  return c;
}

cuda::CudaExecutionConfig cuda_config(const mpcf_options& o) {
  cuda::CudaExecutionConfig c;
  c.devices = o.devices;
  c.splitHint = o.split_hint;
  c.minBlockSide = o.min_block_side;
  c.maxBlockElements = o.max_block_elements;
  c.memoryFraction = o.memory_fraction;
  return c;
}

bool use_cuda(const mpcf_options& o, double mergeSteps, mpcf_backend_reason* why) {
  mpcf_backend_reason unused;
  mpcf_backend_reason& reason = why ? *why : unused;
  reason = MPCF_REASON_REQUESTED;
  switch (o.backend) {
    case MPCF_BACKEND_CPU:
      return false;
    case MPCF_BACKEND_CUDA:
      if (!cuda::compiled_with_cuda()) {
        throw CudaUnavailable(
            "CUDA not available: backend CUDA was requested but this libmpcf was built without "
            "CUDA support");
      }
      if (cuda::device_count() == 0) {
        throw CudaUnavailable(
            "CUDA not available: backend CUDA was requested but no CUDA device (or driver) was "
            "found");
      }
      return true;
    case MPCF_BACKEND_AUTO:
    default:
      if (!cuda::compiled_with_cuda()) {
        reason = MPCF_REASON_AUTO_NO_CUDA_BUILD;
        return false;
      }
      if (cuda::device_count() == 0) {
        reason = MPCF_REASON_AUTO_NO_DEVICE;
        return false;
      }
      if (!(mergeSteps >= o.cuda_threshold)) {
        reason = MPCF_REASON_AUTO_BELOW_THRESHOLD;
        return false;
      }
      reason = MPCF_REASON_AUTO_THRESHOLD_MET;
      return true;
  }
}

RunInfo cpu_run(const mpcf_options& o, double mergeSteps, mpcf_backend_reason why) {
  RunInfo r;
  r.backend = MPCF_BACKEND_CPU;
  r.reason = why;
  r.threads = resolve_thread_count(o.threads);
  r.merge_steps = mergeSteps;
  return r;
}

RunInfo cuda_run(const mpcf_options& o, double mergeSteps, mpcf_backend_reason why) {
  RunInfo r;
  r.backend = MPCF_BACKEND_CUDA;
  r.reason = why;
  r.threads = 0;
  r.devices = o.devices;
  if (r.devices.empty()) {
    for (int d = 0; d < cuda::device_count(); ++d) r.devices.push_back(d);
  }
  r.merge_steps = mergeSteps;
  return r;
}

mpcf_backend_reason cpu_only_reason(const mpcf_options& o) noexcept {
  return o.backend == MPCF_BACKEND_CPU ? MPCF_REASON_REQUESTED : MPCF_REASON_CPU_ONLY;
}

void write_task_info(const RunInfo& run, double seconds, mpcf_task_info* out) {
  require(out, "info");
  if (out->struct_size < 8) {
    throw InvalidArgument("info->struct_size = " + std::to_string(out->struct_size) +
                          " is smaller than 8, the size of the fields every version of "
                          "mpcf_task_info has; set it to sizeof(mpcf_task_info)");
  }
  mpcf_task_info info;
  std::memset(&info, 0, sizeof info);
  info.backend = run.backend;
  info.reason = run.reason;
  info.threads = run.threads;
  info.merge_steps = run.merge_steps;
  info.seconds = seconds;
  info.device_count = static_cast<std::int32_t>(run.devices.size());
  for (int k = 0; k < MPCF_TASK_INFO_MAX_DEVICES; ++k) {
    info.devices[k] = static_cast<std::size_t>(k) < run.devices.size() ? run.devices[k] : -1;
  }
  const std::uint32_t n = std::min<std::uint32_t>(out->struct_size, sizeof info);
  info.struct_size = n;
  std::memcpy(out, &info, n);
}

namespace {
// mpcf_last_task_info's record; has_run false: none.
thread_local bool t_has_run = false;
thread_local RunInfo t_last_run;
thread_local double t_last_seconds = 0.0;
}  // namespace

void forget_last_run() noexcept { t_has_run = false; }

void record_last_run(const RunInfo& info, double seconds) noexcept {
  try {
    t_last_run = info;
    t_last_seconds = seconds;
    t_has_run = true;
  } catch (...) {
    t_has_run = false;  // out of memory copying the device list
  }
}

void write_last_run(mpcf_task_info* out) {
  require(out, "info");
  if (!t_has_run) {
    throw InvalidArgument(
        "no synchronous computation has run on this thread since its last one began (the last one "
        "failed its argument checks, or none was made); mpcf_last_task_info describes the last "
        "mpcf_pdist, mpcf_l2_kernel, mpcf_cdist, mpcf_knn, mpcf_kernel_matvec, "
        "mpcf_*_stream, mpcf_lp_distance, mpcf_l2_inner_product or mpcf_lp_norm that computed");
  }
  write_task_info(t_last_run, t_last_seconds, out);
}

namespace {
// The innermost callback scope of this thread: the scopes form a list on the
// stack (no allocation), null outside every callback.
thread_local const CallbackScope* t_callback_scope = nullptr;
}  // namespace

CallbackScope::CallbackScope(const CallbackOwner& owner) noexcept
    : owner_(&owner), outer_(t_callback_scope) {
  t_callback_scope = this;
}

CallbackScope::~CallbackScope() { t_callback_scope = outer_; }

CallbackOwner::CallbackOwner() {
  for (const CallbackScope* s = t_callback_scope; s != nullptr; s = s->outer_) {
    const mpcf_task* t = s->owner_->task.load(std::memory_order_acquire);
    if (t != nullptr) enclosing.push_back(t);
    enclosing.insert(enclosing.end(), s->owner_->enclosing.begin(), s->owner_->enclosing.end());
  }
}

bool in_own_callback(const mpcf_task* task) noexcept {
  for (const CallbackScope* s = t_callback_scope; s != nullptr; s = s->outer_) {
    if (s->owner_->task.load(std::memory_order_acquire) == task) return true;
    for (const mpcf_task* t : s->owner_->enclosing) {
      if (t == task) return true;
    }
  }
  return false;
}

void start_task(PlannedTask t, mpcf_task** out, CallbackOwner* owner) {
  auto handle = std::make_unique<mpcf_task>();
  handle->task = std::move(t.task);
  handle->run = std::move(t.run);
  if (owner) owner->task.store(handle.get(), std::memory_order_release);
  handle->task->start();
  *out = handle.release();
}

void run_task(PlannedTask t) {
  t.task->run_here();
  // Recorded after the run: a computation started in one of its callbacks
  // (on this thread) has recorded itself meanwhile, and this one ends last.
  record_last_run(t.run, t.task->seconds());
  if (auto e = t.task->error()) std::rethrow_exception(e);
}

}  // namespace mpcf::capi
