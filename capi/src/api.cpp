// The C API entry points. Every entry point runs its body through
// api_entry(), the one noexcept boundary that turns exceptions into status
// codes and the thread-local error message. Argument checks all happen before
// anything is written, so a failed call leaves outputs untouched.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "api_support.hpp"
#include "handles.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/matrix_integrate.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/core/shape.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/cuda/registered_host.hpp"
#include "mpcf/mpcf.h"

using mpcf::BufferTooSmall;
using mpcf::CudaUnavailable;
using mpcf::DtypeMismatch;
using mpcf::ErrorKind;
using mpcf::InvalidArgument;
using mpcf::OperationSpec;
using mpcf::SymmetricLayout;

namespace {

using namespace mpcf::capi;

SymmetricLayout symmetric_layout(const mpcf_layout& layout, bool kernel) {
  switch (raw_enum(layout)) {
    case MPCF_LAYOUT_DENSE: return SymmetricLayout::Dense;
    case MPCF_LAYOUT_PACKED_LOWER: return SymmetricLayout::PackedLower;
    case MPCF_LAYOUT_CONDENSED:
      if (kernel) {
        throw InvalidArgument(
            "layout MPCF_LAYOUT_CONDENSED has no diagonal and cannot hold a kernel matrix; use "
            "MPCF_LAYOUT_DENSE or MPCF_LAYOUT_PACKED_LOWER");
      }
      return SymmetricLayout::Condensed;
  }
  throw InvalidArgument("layout " + std::to_string(raw_enum(layout)) +
                        " is not an mpcf_layout value");
}

template <typename T>
std::unique_ptr<mpcf::Work> pairwise_work(const mpcf_pcfs* X, OperationSpec spec,
                                          SymmetricLayout layout, void* out,
                                          const mpcf_options& o, RunInfo& run) {
  const auto n = static_cast<std::size_t>(X->objects());
  auto writer = std::make_shared<mpcf::MatrixWriter<T>>(
      mpcf::MatrixWriter<T>::symmetric(static_cast<T*>(out), n, layout, spec.is_kernel()));
  return make_work<T>(request_for<T>(X, nullptr, spec, o, std::move(writer)), o, run);
}

PlannedTask pairwise_task(const mpcf_pcfs* X, OperationSpec spec, const mpcf_layout& layout,
                          void* out, std::uint64_t capacity, const mpcf_options* options) {
  require(X, "X");
  const SymmetricLayout sl = symmetric_layout(layout, spec.is_kernel());
  check_capacity(mpcf::symmetric_result_size(X->objects(), sl, spec.is_kernel()), capacity, out);
  const mpcf_options& o = options_or_default(options);
  return plan([&](RunInfo& run) {
    return X->dtype == MPCF_FLOAT32 ? pairwise_work<float>(X, spec, sl, out, o, run)
                                    : pairwise_work<double>(X, spec, sl, out, o, run);
  });
}

template <typename T>
std::unique_ptr<mpcf::Work> cross_work(const mpcf_pcfs* X, const mpcf_pcfs* Y, OperationSpec spec,
                                       void* out, const mpcf_options& o, RunInfo& run) {
  auto writer = std::make_shared<mpcf::MatrixWriter<T>>(mpcf::MatrixWriter<T>::dense(
      static_cast<T*>(out), static_cast<std::size_t>(X->objects()),
      static_cast<std::size_t>(Y->objects())));
  return make_work<T>(request_for<T>(X, Y, spec, o, std::move(writer)), o, run);
}

PlannedTask cross_task(const mpcf_pcfs* X, const mpcf_pcfs* Y, const mpcf_metric& metric,
                       double p, void* out, std::uint64_t capacity, const mpcf_options* options) {
  require(X, "X");
  require(Y, "Y");
  check_pair_operands(X, Y);
  const OperationSpec spec = cross_spec(metric, p);
  check_capacity(mpcf::checked_product(X->objects(), Y->objects(), "the cdist result"), capacity, out);
  const mpcf_options& o = options_or_default(options);
  return plan([&](RunInfo& run) {
    return X->dtype == MPCF_FLOAT32 ? cross_work<float>(X, Y, spec, out, o, run)
                                    : cross_work<double>(X, Y, spec, out, o, run);
  });
}

// One pair, on the calling thread.
template <typename T>
double pair_value(const mpcf_pcfs* X, std::uint64_t i, const mpcf_pcfs* Y, std::uint64_t j,
                  OperationSpec spec, const mpcf_options& o) {
  // Objects i and j (single functions when K = 1: the bits of integrate_pair).
  return mpcf::dispatch_function_operation<T>(X->linear(), spec, [&](auto op, auto linear) {
    using Op = decltype(op);
    using Pair = std::conditional_t<decltype(linear)::value, mpcf::PlfObjectPair<T, Op>,
                                    mpcf::PcfObjectPair<T, Op>>;
    const Pair value{X->get<T>(), Y->get<T>(), static_cast<std::uint32_t>(X->components()),
                     window_of<T>(o), op};
    return static_cast<double>(value(static_cast<std::size_t>(i), static_cast<std::size_t>(j)));
  });
}

// The breakpoints of object i of X (of all its components).
double object_breakpoints(const mpcf_pcfs* X, std::uint64_t i) {
  const std::uint64_t K = X->components();
  double m = 0.0;
  for (std::uint64_t k = 0; k < K; ++k) {
    const auto f = static_cast<std::size_t>(i * K + k);
    m += static_cast<double>(X->dtype == MPCF_FLOAT32 ? X->f32->data().size_of(f)
                                                      : X->f64->data().size_of(f));
  }
  return m;
}

// The task info of a computation on the calling thread (mpcf.h: CPU only).
RunInfo calling_thread_run(const mpcf_options& o, double mergeSteps) {
  RunInfo r = cpu_run(o, mergeSteps, cpu_only_reason(o));
  r.threads = 1;
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The checks and dtype dispatch of the single-pair entry points; makeSpec
// runs after the handle and index checks (its own check comes last).
template <typename MakeSpec>
void single_pair(const mpcf_pcfs* X, std::uint64_t i, const mpcf_pcfs* Y, std::uint64_t j,
                 const mpcf_options* options, double* out, MakeSpec makeSpec) {
  forget_last_run();
  require(X, "X");
  require(Y, "Y");
  require(out, "out");
  check_pair_operands(X, Y);
  check_index(i, X, "i");
  check_index(j, Y, "j");
  const OperationSpec spec = makeSpec();
  const mpcf_options& o = options_or_default(options);
  const auto t0 = std::chrono::steady_clock::now();
  *out = X->dtype == MPCF_FLOAT32 ? pair_value<float>(X, i, Y, j, spec, o)
                                  : pair_value<double>(X, i, Y, j, spec, o);
  record_last_run(calling_thread_run(o, object_breakpoints(X, i) + object_breakpoints(Y, j)),
                  seconds_since(t0));
}

// f against the one-point function *g, continuing `acc`, by the walk of
// the function type.
template <bool Windowed, bool Linear, typename T, typename Op>
mpcf::op_acc_t<Op> accumulate_pair(const mpcf::PcfPoint<T>* f, std::uint64_t nf,
                                   const mpcf::PcfPoint<T>* g, const mpcf::Window<T>& w,
                                   const Op& op, mpcf::op_acc_t<Op> acc) {
  std::conditional_t<Linear, mpcf::PlfPairWalk<Windowed, T, Op>, mpcf::PairWalk<Windowed, T, Op>>
      walk;
  walk.init(f, static_cast<std::uint32_t>(nf), g, 1u, op);
  walk.continue_from(acc);
  return walk.accumulate(w.a, w.b, op);
}

template <typename T>
void norms(const mpcf_pcfs* X, OperationSpec spec, void* out, const mpcf_options& o) {
  const auto& d = X->get<T>()->data();
  T* dst = static_cast<T*>(out);
  const std::size_t K = static_cast<std::size_t>(X->components());
  const mpcf::Window<T> w = window_of<T>(o);
  mpcf::dispatch_function_operation<T>(X->linear(), spec, [&](auto op, auto linear) {
    using Op = decltype(op);
    constexpr bool kLinear = decltype(linear)::value;
    for (std::size_t obj = 0; obj < static_cast<std::size_t>(X->objects()); ++obj) {
      // The distance to the zero object: each component against the zero
      // function (one breakpoint of value 0), in one accumulator.
      mpcf::op_acc_t<Op> acc = op.init();
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t i = obj * K + k;
        const mpcf::PcfPoint<T> zero{d.data_of(i)[0].t, T(0)};
        acc = w.is_whole_line()
                  ? accumulate_pair<false, kLinear>(d.data_of(i), d.size_of(i), &zero, w, op, acc)
                  : accumulate_pair<true, kLinear>(d.data_of(i), d.size_of(i), &zero, w, op, acc);
      }
      dst[obj] = op.finalize(acc);
    }
    return 0;
  });
}

template <typename T>
std::shared_ptr<const mpcf::PcfCollection<T>> make_collection(std::uint64_t n,
                                                               const std::uint64_t* offsets,
                                                               const void* times,
                                                               const void* values,
                                                               std::ptrdiff_t stride) {
  return std::make_shared<const mpcf::PcfCollection<T>>(
      n, offsets, static_cast<const T*>(times), static_cast<const T*>(values), stride);
}

void create_pcfs(const mpcf_dtype& dtype, std::uint64_t n, const std::uint64_t* offsets,
                 const void* times, const void* values, std::ptrdiff_t stride, mpcf_pcfs** out,
                 mpcf_function_type type = MPCF_PIECEWISE_CONSTANT) {
  require(out, "out");
  check_dtype(dtype);
  require(offsets, "offsets");
  if (offsets[n] > 0) {
    require(times, stride == 1 ? "times" : "points");
    require(values, stride == 1 ? "values" : "points");
  }
  auto handle = std::make_unique<mpcf_pcfs>();
  handle->dtype = static_cast<mpcf_dtype>(raw_enum(dtype));
  handle->type = type;
  handle->shape = {n};
  if (handle->dtype == MPCF_FLOAT32) {
    handle->f32 = make_collection<float>(n, offsets, times, values, stride);
  } else {
    handle->f64 = make_collection<double>(n, offsets, times, values, stride);
  }
  *out = handle.release();
}

std::string build_info_string() {
  std::ostringstream os;
  os << "libmpcf " << MPCF_VERSION_MAJOR << '.' << MPCF_VERSION_MINOR << '.' << MPCF_VERSION_PATCH;
  os << "; " << (mpcf::cuda::compiled_with_cuda() ? "cuda=on; " : "") << mpcf::cuda::build_info();
#if defined(__clang__)
  os << "; compiler=Clang " << __clang_major__ << '.' << __clang_minor__ << '.' << __clang_patchlevel__;
#elif defined(__GNUC__)
  os << "; compiler=GNU " << __GNUC__ << '.' << __GNUC_MINOR__ << '.' << __GNUC_PATCHLEVEL__;
#endif
  os << "; threads=" << mpcf::resolve_thread_count(0);
  // The CPU walk's instruction set on this machine, and those compiled in.
  os << "; cpu_simd=" << mpcf::cpu_simd_name(mpcf::cpu_simd_best()) << " (compiled: scalar";
  for (int s = 1; s < mpcf::kCpuSimdCount; ++s) {
    const auto c = static_cast<mpcf::CpuSimd>(s);
    if (mpcf::cpu_simd_compiled(c)) os << ' ' << mpcf::cpu_simd_name(c);
  }
  os << ')';
  return os.str();
}

}  // namespace

extern "C" {

int mpcf_version(void) { return MPCF_VERSION; }

const char* mpcf_version_string(void) {
#define MPCF_STR2(x) #x
#define MPCF_STR(x) MPCF_STR2(x)
  return MPCF_STR(MPCF_VERSION_MAJOR) "." MPCF_STR(MPCF_VERSION_MINOR) "." MPCF_STR(MPCF_VERSION_PATCH);
}

const char* mpcf_build_info(void) {
  // Built once; the device list does not change while the process runs.
  static const std::string info = [] {
    try {
      return build_info_string();
    } catch (...) {
      return std::string("libmpcf (build information unavailable)");
    }
  }();
  return info.c_str();
}

int mpcf_has_cuda(void) { return mpcf::cuda::compiled_with_cuda() ? 1 : 0; }

int mpcf_cuda_device_count(void) { return mpcf::cuda::device_count(); }

mpcf_status mpcf_cuda_cached_bytes(int device, uint64_t* out) {
  return api_entry("mpcf_cuda_cached_bytes", [&] {
    require(out, "out");
    if (device < 0) {
      throw mpcf::InvalidArgument("device id " + std::to_string(device) + " is negative");
    }
    *out = mpcf::cuda::cached_device_bytes(device);
  });
}

mpcf_status mpcf_cuda_set_cache_limit(uint64_t bytes) {
  return api_entry("mpcf_cuda_set_cache_limit",
                   [&] { mpcf::cuda::set_cache_limit_bytes(bytes); });
}

mpcf_status mpcf_cuda_cache_limit(uint64_t* out) {
  return api_entry("mpcf_cuda_cache_limit", [&] {
    require(out, "out");
    *out = mpcf::cuda::cache_limit_bytes();
  });
}

mpcf_status mpcf_cuda_release_memory(void) {
  return api_entry("mpcf_cuda_release_memory", [&] { mpcf::cuda::release_cached_memory(); });
}

mpcf_status mpcf_cuda_register_host(void* p, uint64_t bytes) {
  return api_entry("mpcf_cuda_register_host", [&] {
    if (p == nullptr) throw InvalidArgument("the host memory to register is NULL");
    if (bytes == 0) throw InvalidArgument("the host memory to register has 0 bytes");
    if (bytes > UINTPTR_MAX - reinterpret_cast<std::uintptr_t>(p)) {
      std::ostringstream os;
      os << "the host range " << p << " + " << bytes << " bytes wraps around the address space";
      throw InvalidArgument(os.str());
    }
    mpcf::cuda::register_host(p, bytes);
  });
}

mpcf_status mpcf_cuda_unregister_host(void* p) {
  return api_entry("mpcf_cuda_unregister_host", [&] {
    if (p == nullptr) throw InvalidArgument("the host memory to unregister is NULL");
    mpcf::cuda::unregister_host(p);
  });
}

const char* mpcf_last_error_message(void) { return mpcf::capi::last_error().c_str(); }

mpcf_status mpcf_last_error_detail(mpcf_error_detail* detail) {
  // Copied before the checks can fail: a failure here replaces the detail.
  const mpcf_error_detail last = last_error_detail();
  return api_entry("mpcf_last_error_detail", [&] {
    require(detail, "detail");
    if (detail->struct_size < 8) {
      throw InvalidArgument("detail->struct_size = " + std::to_string(detail->struct_size) +
                            " is smaller than 8, the size of the fields every version of "
                            "mpcf_error_detail has; set it to sizeof(mpcf_error_detail)");
    }
    const std::uint32_t n = std::min<std::uint32_t>(detail->struct_size, sizeof last);
    mpcf_error_detail copy = last;
    copy.struct_size = n;
    std::memcpy(detail, &copy, n);
  });
}

const char* mpcf_status_name(mpcf_status status) {
  switch (raw_enum(status)) {
    case MPCF_OK: return "MPCF_OK";
    case MPCF_ERROR_INVALID_ARGUMENT: return "MPCF_ERROR_INVALID_ARGUMENT";
    case MPCF_ERROR_INVALID_PCF: return "MPCF_ERROR_INVALID_PCF";
    case MPCF_ERROR_BUFFER_TOO_SMALL: return "MPCF_ERROR_BUFFER_TOO_SMALL";
    case MPCF_ERROR_DTYPE_MISMATCH: return "MPCF_ERROR_DTYPE_MISMATCH";
    case MPCF_ERROR_OUT_OF_MEMORY: return "MPCF_ERROR_OUT_OF_MEMORY";
    case MPCF_ERROR_CUDA_UNAVAILABLE: return "MPCF_ERROR_CUDA_UNAVAILABLE";
    case MPCF_ERROR_CUDA: return "MPCF_ERROR_CUDA";
    case MPCF_ERROR_CANCELLED: return "MPCF_ERROR_CANCELLED";
    case MPCF_ERROR_INTERNAL: return "MPCF_ERROR_INTERNAL";
    case MPCF_RUNNING: return "MPCF_RUNNING";
  }
  return "MPCF_UNKNOWN_STATUS";
}

/* ---- collections ---- */

mpcf_status mpcf_pcfs_create(mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                             const void* times, const void* values, mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_create",
                   [&] { create_pcfs(dtype, n, offsets, times, values, 1, out); });
}

mpcf_status mpcf_pcfs_create_interleaved(mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                                         const void* points, mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_create_interleaved", [&] {
    const void* values = nullptr;
    if (points != nullptr) {
      const std::size_t elem = raw_enum(dtype) == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
      values = static_cast<const char*>(points) + elem;
    }
    create_pcfs(dtype, n, offsets, points, values, 2, out);
  });
}

mpcf_status mpcf_plfs_create(mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                             const void* times, const void* values, mpcf_pcfs** out) {
  return api_entry("mpcf_plfs_create", [&] {
    create_pcfs(dtype, n, offsets, times, values, 1, out, MPCF_PIECEWISE_LINEAR);
  });
}

mpcf_status mpcf_plfs_create_interleaved(mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                                         const void* points, mpcf_pcfs** out) {
  return api_entry("mpcf_plfs_create_interleaved", [&] {
    const void* values = nullptr;
    if (points != nullptr) {
      const std::size_t elem = raw_enum(dtype) == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
      values = static_cast<const char*>(points) + elem;
    }
    create_pcfs(dtype, n, offsets, points, values, 2, out, MPCF_PIECEWISE_LINEAR);
  });
}

mpcf_status mpcf_pcfs_function_type(const mpcf_pcfs* X, mpcf_function_type* out) {
  return api_entry("mpcf_pcfs_function_type", [&] {
    require(X, "X");
    require(out, "out");
    *out = X->type;
  });
}

void mpcf_pcfs_destroy(mpcf_pcfs* pcfs) { delete pcfs; }

mpcf_status mpcf_pcfs_reshape(mpcf_pcfs* pcfs, size_t ndim, const uint64_t* shape) {
  return api_entry("mpcf_pcfs_reshape", [&] {
    require(pcfs, "pcfs");
    require(shape, "shape");
    if (ndim < 1 || ndim > 32) {
      throw InvalidArgument("ndim = " + std::to_string(ndim) + " is outside 1..32");
    }
    const mpcf::ShapeCount c = mpcf::shape_count(shape, ndim);
    if (c.overflow || c.count != pcfs->count()) {
      throw InvalidArgument("shape " + mpcf::shape_text(shape, ndim) + " holds " +
                            (c.overflow ? std::string("too many") : std::to_string(c.count)) +
                            " elements but the collection has " + std::to_string(pcfs->count()) +
                            " functions");
    }
    pcfs->shape.assign(shape, shape + ndim);
    pcfs->component_axis = false;
  });
}

mpcf_status mpcf_pcfs_set_component_axis(mpcf_pcfs* X, int on) {
  return api_entry("mpcf_pcfs_set_component_axis", [&] {
    require(X, "X");
    if (on == 0) {
      X->component_axis = false;
      return;
    }
    if (X->shape.size() < 2) {
      throw InvalidArgument("a component axis needs a shape of at least 2 dimensions (objects, K); "
                            "this collection's shape " +
                            mpcf::shape_text(X->shape.data(), X->shape.size()) +
                            " has 1: reshape it first");
    }
    if (X->shape.back() == 0) {
      throw InvalidArgument("the last axis of shape " +
                            mpcf::shape_text(X->shape.data(), X->shape.size()) +
                            " has 0 functions; an object needs at least one component");
    }
    X->component_axis = true;
  });
}

mpcf_status mpcf_pcfs_components(const mpcf_pcfs* X, uint64_t* out) {
  return api_entry("mpcf_pcfs_components", [&] {
    require(X, "X");
    require(out, "out");
    *out = X->components();
  });
}

mpcf_status mpcf_pcfs_count(const mpcf_pcfs* pcfs, uint64_t* out) {
  return api_entry("mpcf_pcfs_count", [&] {
    require(pcfs, "pcfs");
    require(out, "out");
    *out = pcfs->count();
  });
}

mpcf_status mpcf_pcfs_total_breakpoints(const mpcf_pcfs* pcfs, uint64_t* out) {
  return api_entry("mpcf_pcfs_total_breakpoints", [&] {
    require(pcfs, "pcfs");
    require(out, "out");
    *out = pcfs->total_breakpoints();
  });
}

mpcf_status mpcf_pcfs_dtype(const mpcf_pcfs* pcfs, mpcf_dtype* out) {
  return api_entry("mpcf_pcfs_dtype", [&] {
    require(pcfs, "pcfs");
    require(out, "out");
    *out = pcfs->dtype;
  });
}

mpcf_status mpcf_pcfs_ndim(const mpcf_pcfs* pcfs, size_t* out) {
  return api_entry("mpcf_pcfs_ndim", [&] {
    require(pcfs, "pcfs");
    require(out, "out");
    *out = pcfs->shape.size();
  });
}

mpcf_status mpcf_pcfs_shape(const mpcf_pcfs* pcfs, uint64_t* shape, size_t capacity) {
  return api_entry("mpcf_pcfs_shape", [&] {
    require(pcfs, "pcfs");
    require(shape, "shape");
    if (capacity < pcfs->shape.size()) {
      throw BufferTooSmall("capacity " + std::to_string(capacity) + " is smaller than ndim = " +
                           std::to_string(pcfs->shape.size()));
    }
    std::copy(pcfs->shape.begin(), pcfs->shape.end(), shape);
  });
}

mpcf_status mpcf_pcfs_slice(const mpcf_pcfs* X, uint64_t begin, uint64_t end, mpcf_pcfs** out) {
  return api_entry("mpcf_pcfs_slice", [&] {
    require(X, "X");
    require(out, "out");
    if (begin > end) {
      throw InvalidArgument("begin = " + std::to_string(begin) + " is greater than end = " +
                            std::to_string(end) + "; a slice needs begin <= end");
    }
    if (end > X->count()) {
      throw InvalidArgument("end = " + std::to_string(end) + " is beyond the collection's " +
                            std::to_string(X->count()) + " functions; a slice needs end <= " +
                            std::to_string(X->count()));
    }
    auto view = std::make_unique<mpcf_pcfs>();
    view->dtype = X->dtype;
    view->type = X->type;
    view->shape = {end - begin};
    if (X->dtype == MPCF_FLOAT32) {
      view->f32 = X->f32->slice(begin, end - begin);
    } else {
      view->f64 = X->f64->slice(begin, end - begin);
    }
    *out = view.release();
  });
}

/* ---- options ---- */

mpcf_status mpcf_options_create(mpcf_options** out) {
  return api_entry("mpcf_options_create", [&] {
    require(out, "out");
    *out = new mpcf_options();
  });
}

void mpcf_options_destroy(mpcf_options* options) { delete options; }

mpcf_status mpcf_options_set_backend(mpcf_options* options, mpcf_backend backend) {
  return api_entry("mpcf_options_set_backend", [&] {
    require(options, "options");
    const int b = raw_enum(backend);
    if (b != MPCF_BACKEND_AUTO && b != MPCF_BACKEND_CPU && b != MPCF_BACKEND_CUDA) {
      throw InvalidArgument("backend " + std::to_string(b) +
                            " is not an mpcf_backend value");
    }
    options->backend = backend;
  });
}

mpcf_status mpcf_options_set_threads(mpcf_options* options, int threads) {
  return api_entry("mpcf_options_set_threads", [&] {
    require(options, "options");
    if (threads < 0 || threads > 4096) {
      throw InvalidArgument("threads = " + std::to_string(threads) +
                            " is outside 0..4096 (0 means all hardware threads)");
    }
    options->threads = threads;
  });
}

mpcf_status mpcf_options_set_window(mpcf_options* options, double a, double b) {
  return api_entry("mpcf_options_set_window", [&] {
    require(options, "options");
    if (std::isnan(a) || std::isnan(b) || !(a < b)) {
      std::ostringstream os;
      os << "window [" << a << ", " << b << ") is invalid; it needs a < b and neither NaN";
      throw InvalidArgument(os.str());
    }
    options->window_a = a;
    options->window_b = b;
  });
}

mpcf_status mpcf_options_set_block_hints(mpcf_options* options, uint64_t split_hint,
                                         uint64_t min_block_side, uint64_t max_block_elements) {
  return api_entry("mpcf_options_set_block_hints", [&] {
    require(options, "options");
    options->split_hint = split_hint;
    options->min_block_side = min_block_side;
    options->max_block_elements = max_block_elements;
  });
}

mpcf_status mpcf_options_set_cuda_threshold(mpcf_options* options, double merge_steps) {
  return api_entry("mpcf_options_set_cuda_threshold", [&] {
    require(options, "options");
    if (std::isnan(merge_steps) || merge_steps < 0) {
      throw InvalidArgument("CUDA threshold must be a non-negative number of merge steps");
    }
    options->cuda_threshold = merge_steps;
  });
}

mpcf_status mpcf_options_set_devices(mpcf_options* options, size_t count, const int* device_ids) {
  return api_entry("mpcf_options_set_devices", [&] {
    require(options, "options");
    if (count > 0) require(device_ids, "device_ids");
    std::vector<int> ids(device_ids, device_ids + count);
    for (std::size_t k = 0; k < count; ++k) {
      if (ids[k] < 0) {
        throw InvalidArgument("device_ids[" + std::to_string(k) + "] = " +
                              std::to_string(ids[k]) + " is negative");
      }
      for (std::size_t l = 0; l < k; ++l) {
        if (ids[l] == ids[k]) {
          throw InvalidArgument("device id " + std::to_string(ids[k]) + " is listed twice");
        }
      }
    }
    options->devices = std::move(ids);
  });
}

mpcf_status mpcf_options_set_memory_fraction(mpcf_options* options, double fraction) {
  return api_entry("mpcf_options_set_memory_fraction", [&] {
    require(options, "options");
    if (!(fraction > 0.0 && fraction <= 1.0)) {
      std::ostringstream os;
      os << "memory fraction " << fraction << " is outside (0, 1]";
      throw InvalidArgument(os.str());
    }
    options->memory_fraction = fraction;
  });
}

/* ---- sizes ---- */

mpcf_status mpcf_exponent_check(double p) {
  return api_entry("mpcf_exponent_check", [&] { distance_spec(p); });
}

mpcf_status mpcf_pdist_size(const mpcf_pcfs* X, mpcf_layout layout, uint64_t* out) {
  return api_entry("mpcf_pdist_size", [&] {
    require(X, "X");
    require(out, "out");
    *out = mpcf::symmetric_result_size(X->objects(), symmetric_layout(layout, false), false);
  });
}

mpcf_status mpcf_l2_kernel_size(const mpcf_pcfs* X, mpcf_layout layout, uint64_t* out) {
  return api_entry("mpcf_l2_kernel_size", [&] {
    require(X, "X");
    require(out, "out");
    *out = mpcf::symmetric_result_size(X->objects(), symmetric_layout(layout, true), true);
  });
}

mpcf_status mpcf_cdist_size(const mpcf_pcfs* X, const mpcf_pcfs* Y, uint64_t* out) {
  return api_entry("mpcf_cdist_size", [&] {
    require(X, "X");
    require(Y, "Y");
    require(out, "out");
    check_same_objects(X, Y);
    *out = mpcf::checked_product(X->objects(), Y->objects(), "the cdist result");
  });
}

/* ---- tasks ---- */

mpcf_status mpcf_task_progress(const mpcf_task* task, uint64_t* done, uint64_t* total) {
  return api_entry("mpcf_task_progress", [&] {
    require(task, "task");
    if (done) *done = task->task->done();
    if (total) *total = task->task->total();
  });
}

mpcf_status mpcf_task_wait(mpcf_task* task, double timeout_seconds) {
  if (task == nullptr) {
    set_last_error("mpcf_task_wait", "argument 'task' is NULL", MPCF_ERROR_INVALID_ARGUMENT);
    return MPCF_ERROR_INVALID_ARGUMENT;
  }
  if (in_own_callback(task)) {
    set_last_error("mpcf_task_wait",
                   "called from the task's own callback (or from a computation started inside "
                   "it), where it would wait for itself; return from the callback instead (a "
                   "non-zero return cancels the task)",
                   MPCF_ERROR_INVALID_ARGUMENT);
    return MPCF_ERROR_INVALID_ARGUMENT;
  }
  bool finished = false;
  const mpcf_status s = api_entry("mpcf_task_wait", [&] {
    finished = task->task->wait_for(std::isnan(timeout_seconds) ? 0.0 : timeout_seconds);
  });
  if (s != MPCF_OK) return s;
  if (!finished) return MPCF_RUNNING;
  if (auto e = task->task->error()) return record_exception("mpcf_task_wait", e);
  return MPCF_OK;
}

mpcf_status mpcf_task_info_get(const mpcf_task* task, mpcf_task_info* info) {
  return api_entry("mpcf_task_info_get", [&] {
    require(task, "task");
    write_task_info(task->run, task->task->seconds(), info);
  });
}

mpcf_status mpcf_last_task_info(mpcf_task_info* info) {
  return api_entry("mpcf_last_task_info", [&] { write_last_run(info); });
}

mpcf_status mpcf_task_cancel(mpcf_task* task) {
  return api_entry("mpcf_task_cancel", [&] {
    require(task, "task");
    task->task->cancel();
  });
}

mpcf_status mpcf_task_status(const mpcf_task* task) {
  if (task == nullptr) {
    set_last_error("mpcf_task_status", "argument 'task' is NULL", MPCF_ERROR_INVALID_ARGUMENT);
    return MPCF_ERROR_INVALID_ARGUMENT;
  }
  switch (task->task->state()) {
    case mpcf::Task::State::Running: return MPCF_RUNNING;
    case mpcf::Task::State::Succeeded: return MPCF_OK;
    case mpcf::Task::State::Failed: break;
  }
  return record_exception("mpcf_task_status", task->task->error());
}

void mpcf_task_destroy(mpcf_task* task) {
  if (task != nullptr && in_own_callback(task)) {
    // Destroying joins the task's threads, one of which is this one: refuse
    // (mpcf.h), leaving the task running and this thread's message set.
    set_last_error("mpcf_task_destroy",
                   "called from the task's own callback (or from a computation started inside "
                   "it), where it would wait for itself; the task was not destroyed (return non-zero from the callback to cancel it, and "
                   "destroy it after mpcf_task_wait returns)",
                   MPCF_ERROR_INVALID_ARGUMENT);
    return;
  }
  delete task;
}

/* ---- operations ---- */

mpcf_status mpcf_pdist_start(const mpcf_pcfs* X, double p, mpcf_layout layout, void* out,
                             uint64_t capacity, const mpcf_options* options, mpcf_task** task) {
  return api_entry("mpcf_pdist_start", [&] {
    require(task, "task");
    start_task(pairwise_task(X, distance_spec(p), layout, out, capacity, options), task);
  });
}

mpcf_status mpcf_pdist(const mpcf_pcfs* X, double p, mpcf_layout layout, void* out,
                       uint64_t capacity, const mpcf_options* options) {
  return api_entry("mpcf_pdist", [&] {
    forget_last_run();
    run_task(pairwise_task(X, distance_spec(p), layout, out, capacity, options));
  });
}

mpcf_status mpcf_l2_kernel_start(const mpcf_pcfs* X, mpcf_layout layout, void* out,
                                 uint64_t capacity, const mpcf_options* options,
                                 mpcf_task** task) {
  return api_entry("mpcf_l2_kernel_start", [&] {
    require(task, "task");
    start_task(pairwise_task(X, OperationSpec::l2_kernel(), layout, out, capacity, options), task);
  });
}

mpcf_status mpcf_l2_kernel(const mpcf_pcfs* X, mpcf_layout layout, void* out, uint64_t capacity,
                           const mpcf_options* options) {
  return api_entry("mpcf_l2_kernel", [&] {
    forget_last_run();
    run_task(pairwise_task(X, OperationSpec::l2_kernel(), layout, out, capacity, options));
  });
}

mpcf_status mpcf_cdist_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_metric metric, double p,
                             void* out, uint64_t capacity, const mpcf_options* options,
                             mpcf_task** task) {
  return api_entry("mpcf_cdist_start", [&] {
    require(task, "task");
    start_task(cross_task(X, Y, metric, p, out, capacity, options), task);
  });
}

mpcf_status mpcf_cdist(const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_metric metric, double p,
                       void* out, uint64_t capacity, const mpcf_options* options) {
  return api_entry("mpcf_cdist", [&] {
    forget_last_run();
    run_task(cross_task(X, Y, metric, p, out, capacity, options));
  });
}

mpcf_status mpcf_lp_distance(const mpcf_pcfs* X, uint64_t i, const mpcf_pcfs* Y, uint64_t j,
                             double p, const mpcf_options* options, double* out) {
  return api_entry("mpcf_lp_distance", [&] {
    single_pair(X, i, Y, j, options, out, [&] { return distance_spec(p); });
  });
}

mpcf_status mpcf_l2_inner_product(const mpcf_pcfs* X, uint64_t i, const mpcf_pcfs* Y, uint64_t j,
                                  const mpcf_options* options, double* out) {
  return api_entry("mpcf_l2_inner_product", [&] {
    single_pair(X, i, Y, j, options, out, [] { return OperationSpec::l2_kernel(); });
  });
}

mpcf_status mpcf_lp_norm(const mpcf_pcfs* X, double p, void* out, uint64_t capacity,
                         const mpcf_options* options) {
  return api_entry("mpcf_lp_norm", [&] {
    forget_last_run();
    require(X, "X");
    const OperationSpec spec = distance_spec(p);
    check_capacity(X->objects(), capacity, out);
    const mpcf_options& o = options_or_default(options);
    const auto t0 = std::chrono::steady_clock::now();
    if (X->dtype == MPCF_FLOAT32) {
      norms<float>(X, spec, out, o);
    } else {
      norms<double>(X, spec, out, o);
    }
    // Each function against the zero function (one breakpoint).
    const double steps =
        static_cast<double>(X->total_breakpoints()) + static_cast<double>(X->count());
    record_last_run(calling_thread_run(o, steps), seconds_since(t0));
  });
}

}  // extern "C"
