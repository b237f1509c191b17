// The C API of the reductions over the pair plane: k nearest neighbours,
// kernel matrix-vector products and the block streams. Each builds its
// consumer (core) and a request, and runs it on the backend the options
// choose, like pdist and cdist (api.cpp).
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <utility>
#include <string>

#include "api_support.hpp"
#include "mpcf/core/block_stream.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/knn.hpp"
#include "mpcf/core/result_writers.hpp"

using namespace mpcf::capi;
using mpcf::BufferTooSmall;
using mpcf::InvalidArgument;
using mpcf::OperationSpec;

namespace {

// What the collections of a knn hold, in its messages.
const char* knn_noun(bool componentAxis) { return componentAxis ? "objects" : "functions"; }

template <typename T>
std::unique_ptr<mpcf::Work> knn_work(const mpcf_pcfs* X, const mpcf_pcfs* Y, OperationSpec spec,
                                     std::uint64_t k, void* distances, std::int64_t* indices,
                                     const mpcf_options& o, RunInfo& run) {
  auto consumer = std::make_shared<mpcf::KnnConsumer<T>>(
      static_cast<T*>(distances), indices, static_cast<std::size_t>(X->objects()),
      static_cast<std::size_t>(k));
  return make_work<T>(request_for<T>(X, Y, spec, o, std::move(consumer)), o, run);
}

PlannedTask knn_task(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, std::uint64_t k,
                     void* distances, std::int64_t* indices, std::uint64_t capacity,
                     const mpcf_options* options) {
  require(X, "X");
  if (Y) check_pair_operands(X, Y);
  const OperationSpec spec = distance_spec(p);
  mpcf::check_knn_k(k, X->objects(), Y ? Y->objects() : 0, Y != nullptr,
                    knn_noun(X->component_axis));
  const std::uint64_t need = mpcf::checked_product(X->objects(), k, "the knn result");
  check_capacity(need, capacity, distances, "distances");
  check_capacity(need, capacity, indices, "indices");
  const mpcf_options& o = options_or_default(options);
  return plan([&](RunInfo& run) {
    return X->dtype == MPCF_FLOAT32
               ? knn_work<float>(X, Y, spec, k, distances, indices, o, run)
               : knn_work<double>(X, Y, spec, k, distances, indices, o, run);
  });
}

template <typename T>
std::unique_ptr<mpcf::Work> knn_both_work(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                          OperationSpec spec, std::uint64_t kx, std::uint64_t ky,
                                          void* xd, std::int64_t* xi, void* yd, std::int64_t* yi,
                                          const mpcf_options& o, RunInfo& run) {
  auto consumer = std::make_shared<mpcf::KnnConsumer<T>>(
      static_cast<T*>(xd), xi, static_cast<std::size_t>(X->objects()), static_cast<std::size_t>(kx),
      static_cast<T*>(yd), yi, static_cast<std::size_t>(Y->objects()), static_cast<std::size_t>(ky));
  return make_work<T>(request_for<T>(X, Y, spec, o, std::move(consumer)), o, run);
}

PlannedTask knn_both_task(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, std::uint64_t kx,
                          std::uint64_t ky, void* xd, std::int64_t* xi, std::uint64_t xCapacity,
                          void* yd, std::int64_t* yi, std::uint64_t yCapacity,
                          const mpcf_options* options) {
  require(X, "X");
  require(Y, "Y");
  check_pair_operands(X, Y);
  const OperationSpec spec = distance_spec(p);
  const char* noun = knn_noun(X->component_axis);
  try {
    mpcf::check_knn_k(kx, X->objects(), Y->objects(), true, noun);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("k_x: ") + e.what());
  }
  try {
    mpcf::check_knn_k(ky, Y->objects(), X->objects(), true, noun);
  } catch (const InvalidArgument& e) {
    // The candidates of Y's lists are X's functions.
    std::string m = e.what();
    const std::string ofY = std::string(" ") + noun + " of Y";
    const std::size_t at = m.find(ofY);
    if (at != std::string::npos) m.replace(at, ofY.size(), std::string(" ") + noun + " of X");
    throw InvalidArgument("k_y: " + m);
  }
  const std::uint64_t xNeed = mpcf::checked_product(X->objects(), kx, "the knn result of X");
  const std::uint64_t yNeed = mpcf::checked_product(Y->objects(), ky, "the knn result of Y");
  check_capacity(xNeed, xCapacity, xd, "x_distances");
  check_capacity(xNeed, xCapacity, xi, "x_indices");
  check_capacity(yNeed, yCapacity, yd, "y_distances");
  check_capacity(yNeed, yCapacity, yi, "y_indices");
  const mpcf_options& o = options_or_default(options);
  return plan([&](RunInfo& run) {
    return X->dtype == MPCF_FLOAT32
               ? knn_both_work<float>(X, Y, spec, kx, ky, xd, xi, yd, yi, o, run)
               : knn_both_work<double>(X, Y, spec, kx, ky, xd, xi, yd, yi, o, run);
  });
}

// The kernel and the operation whose blocks it reads.
mpcf::KernelSpec kernel_spec(const mpcf_kernel& kernel, double p, double scale,
                             OperationSpec& op) {
  mpcf::KernelSpec k;
  switch (raw_enum(kernel)) {
    case MPCF_KERNEL_L2:
      k.kind = mpcf::KernelKind::L2;
      op = OperationSpec::l2_kernel();
      return k;
    case MPCF_KERNEL_GAUSSIAN:
      k.kind = mpcf::KernelKind::Gaussian;
      break;
    case MPCF_KERNEL_LAPLACIAN:
      k.kind = mpcf::KernelKind::Laplacian;
      break;
    default:
      throw InvalidArgument("kernel " + std::to_string(raw_enum(kernel)) +
                            " is not an mpcf_kernel value");
  }
  op = distance_spec(p);
  if (!std::isfinite(scale) || !(scale > 0)) {
    std::ostringstream os;
    os << "scale = " << scale << " is not valid; the Gaussian and Laplacian kernels need a finite "
       << "scale > 0";
    throw InvalidArgument(os.str());
  }
  k.p = p;
  k.scale = scale;
  return k;
}

template <typename T>
void check_finite(const void* V, std::uint64_t rows, std::uint64_t r) {
  const T* v = static_cast<const T*>(V);
  for (std::uint64_t e = 0; e < rows * r; ++e) {
    if (!std::isfinite(v[e])) {
      std::ostringstream os;
      os << "V[" << e / r << "][" << e % r << "] = " << v[e] << " is not finite; V must be finite";
      throw InvalidArgument(os.str());
    }
  }
}

// The objects below this many are normed on the calling thread; above it,
// in chunks of at least this many on up to the options' threads (a
// 20,000 x 128 collection took 8 ms on one thread of a 16-core host
// before a 27 ms GPU mat-vec).
constexpr std::size_t kNormsPerThread = 2048;

template <typename T>
std::vector<mpcf::FunctionNorms> compute_norms(const mpcf_pcfs* X, double a, double b,
                                               const mpcf_options& o);

// The norms of X's objects on the options' window: those of the handle's
// last L2 mat-vec when it had the same window and components (NormsMemo),
// else computed now and kept.
template <typename T>
std::vector<mpcf::FunctionNorms> norms_of(const mpcf_pcfs* X, const mpcf_options& o) {
  const mpcf::Window<T> w = window_of<T>(o);
  const double a = static_cast<double>(w.a), b = static_cast<double>(w.b);
  const std::uint64_t K = X->components();
  mpcf::capi::NormsMemo& memo = X->norms_memo;
  {
    std::lock_guard<std::mutex> lock(memo.mutex);
    if (memo.kept && memo.a == a && memo.b == b && memo.components == K) return memo.norms;
  }
  std::vector<mpcf::FunctionNorms> n = compute_norms<T>(X, a, b, o);
  std::lock_guard<std::mutex> lock(memo.mutex);
  memo.norms = n;
  memo.kept = true;
  memo.a = a;
  memo.b = b;
  memo.components = K;
  return n;
}

template <typename T>
std::vector<mpcf::FunctionNorms> compute_norms(const mpcf_pcfs* X, double a, double b,
                                               const mpcf_options& o) {
  const auto& d = X->get<T>()->data();
  // Of an object of K components (the kernel is sum_k <x_k, y_k>): the
  // largest sup norm and the sum of the L1 norms, which bound
  // |sum_k <x_k, y_k>| as the single-function norms bound |<x, y>|.
  const std::size_t K = static_cast<std::size_t>(X->components());
  std::vector<mpcf::FunctionNorms> n(static_cast<std::size_t>(X->objects()));
  const bool linear = X->linear();
  auto norm_range = [&](std::size_t first, std::size_t last) {
    for (std::size_t o = first; o < last; ++o) {
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t i = o * K + k;
        const auto m = static_cast<std::size_t>(d.size_of(i));
        const mpcf::FunctionNorms c = linear ? mpcf::linear_function_norms(d.data_of(i), m, a, b)
                                             : mpcf::function_norms(d.data_of(i), m, a, b);
        n[o].l1 = k == 0 ? c.l1 : n[o].l1 + c.l1;
        n[o].linf = k == 0 ? c.linf : std::max(n[o].linf, c.linf);
      }
    }
  };
  const std::size_t chunks = std::min<std::size_t>(
      static_cast<std::size_t>(mpcf::resolve_thread_count(o.threads)), n.size() / kNormsPerThread);
  if (chunks <= 1) {
    norm_range(0, n.size());
    return n;
  }
  // Each thread writes its own objects' entries.
  const std::size_t per = (n.size() + chunks - 1) / chunks;
  mpcf::TaskControl control;
  mpcf::run_on_threads(static_cast<int>(chunks), control, [&](int w) {
    const std::size_t first = static_cast<std::size_t>(w) * per;
    norm_range(first, std::min(n.size(), first + per));
  });
  return n;
}

template <typename T>
std::unique_ptr<mpcf::Work> matvec_work(const mpcf_pcfs* X, const mpcf_pcfs* Y,
                                        mpcf::KernelSpec kernel, OperationSpec spec, const void* V,
                                        std::uint64_t r, void* out, const mpcf_options& o,
                                        RunInfo& run) {
  const mpcf_pcfs* cols = Y ? Y : X;
  // V is copied now and checked as copied: the task uses these values, not
  // whatever the caller's buffer holds later (mpcf.h: V is not borrowed).
  const T* v = static_cast<const T*>(V);
  std::vector<T> copy(v, v + cols->objects() * r);
  check_finite<T>(copy.data(), cols->objects(), r);
  std::vector<mpcf::FunctionNorms> rowNorms, colNorms;
  if (kernel.kind == mpcf::KernelKind::L2) {
    rowNorms = norms_of<T>(X, o);
    colNorms = Y ? norms_of<T>(Y, o) : rowNorms;
  }
  auto consumer = std::make_shared<mpcf::MatvecConsumer<T>>(
      kernel, std::move(copy), static_cast<std::size_t>(r), static_cast<T*>(out),
      static_cast<std::size_t>(X->objects()), static_cast<std::size_t>(cols->objects()),
      std::move(rowNorms), std::move(colNorms));
  return make_work<T>(request_for<T>(X, Y, spec, o, std::move(consumer)), o, run);
}

PlannedTask matvec_task(const mpcf_pcfs* X, const mpcf_pcfs* Y, const mpcf_kernel& kernel,
                        double p, double scale, const void* V, std::uint64_t vElements,
                        std::uint64_t r, void* out, std::uint64_t capacity,
                        const mpcf_options* options) {
  require(X, "X");
  if (Y) check_pair_operands(X, Y);
  OperationSpec spec;
  const mpcf::KernelSpec k = kernel_spec(kernel, p, scale, spec);
  if (r == 0) throw InvalidArgument("r = 0; V needs at least one column (r >= 1)");
  const std::uint64_t rows = Y ? Y->objects() : X->objects();
  const std::uint64_t vNeed = mpcf::checked_product(rows, r, "V");
  if (vElements != vNeed) {
    std::ostringstream os;
    os << "V has " << vElements << " elements but count(" << (Y ? "Y" : "X") << ") x r = " << rows
       << " x " << r << " = " << vNeed;
    throw InvalidArgument(os.str());
  }
  if (vNeed > 0) require(V, "V");
  check_capacity(mpcf::checked_product(X->objects(), r, "the mat-vec result"), capacity, out);
  const mpcf_options& o = options_or_default(options);
  return plan([&](RunInfo& run) {
    return X->dtype == MPCF_FLOAT32 ? matvec_work<float>(X, Y, k, spec, V, r, out, o, run)
                                    : matvec_work<double>(X, Y, k, spec, V, r, out, o, run);
  });
}

template <typename T>
std::unique_ptr<mpcf::Work> stream_work(const mpcf_pcfs* X, const mpcf_pcfs* Y, OperationSpec spec,
                                        mpcf_block_callback callback, void* user,
                                        const mpcf_options& o,
                                        std::shared_ptr<CallbackOwner> owner, RunInfo& run) {
  const mpcf_dtype dtype = X->dtype;
  auto consumer = std::make_shared<mpcf::StreamConsumer<T>>(
      [callback, user, dtype, owner](const mpcf::BlockInfo& b, const T* values) {
        // While the callback runs, this thread knows whose it is, so that
        // mpcf_task_wait / mpcf_task_destroy of that task refuse (they
        // would wait for the callback that calls them).
        const CallbackScope scope(*owner);
        mpcf_block block;
        block.row_begin = b.rows.first;
        block.row_end = b.rows.last + 1;
        block.col_begin = b.cols.first;
        block.col_end = b.cols.last + 1;
        block.dtype = dtype;
        block.values = values;
        return callback(&block, user);
      });
  return make_work<T>(request_for<T>(X, Y, spec, o, std::move(consumer)), o, run);
}

PlannedTask stream_task(const mpcf_pcfs* X, const mpcf_pcfs* Y, OperationSpec spec,
                        mpcf_block_callback callback, void* user, const mpcf_options* options,
                        std::shared_ptr<CallbackOwner> owner) {
  require(X, "X");
  if (Y) check_pair_operands(X, Y);
  if (callback == nullptr) throw InvalidArgument("argument 'callback' is NULL");
  const mpcf_options& o = options_or_default(options);
  return plan([&](RunInfo& run) {
    return X->dtype == MPCF_FLOAT32
               ? stream_work<float>(X, Y, spec, callback, user, o, owner, run)
               : stream_work<double>(X, Y, spec, callback, user, o, owner, run);
  });
}

// The checks of one input of mpcf_knn_merge: indices >= 0 and every row
// ascending by (distance, index) (neighbour_less, the order of every knn).
template <typename T>
void check_merge_input(const T* d, const std::int64_t* ix, std::uint64_t rows, std::uint64_t k,
                       const char* name) {
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t e = 0; e < k; ++e) {
      const std::uint64_t at = r * k + e;
      if (ix[at] < 0) {
        std::ostringstream os;
        os << name << "_indices[" << r << "][" << e << "] = " << ix[at]
           << "; a neighbour's index is at least 0";
        throw InvalidArgument(os.str());
      }
      if (e > 0 && mpcf::neighbour_less(mpcf::Neighbour<T>{d[at], ix[at]},
                                        mpcf::Neighbour<T>{d[at - 1], ix[at - 1]})) {
        std::ostringstream os;
        os << name << "'s row " << r << " is not ascending by (distance, index) at entry " << e
           << " (" << d[at - 1] << ", " << ix[at - 1] << ") then (" << d[at] << ", " << ix[at]
           << ")";
        throw InvalidArgument(os.str());
      }
    }
  }
}

template <typename T>
void knn_merge(std::uint64_t rows, std::uint64_t k, const T* ad, const std::int64_t* ai,
               std::uint64_t ak, const T* bd, const std::int64_t* bi, std::uint64_t bk, T* od,
               std::int64_t* oi) {
  check_merge_input(ad, ai, rows, ak, "a");
  check_merge_input(bd, bi, rows, bk, "b");
  for (std::uint64_t r = 0; r < rows; ++r) {
    std::uint64_t x = 0, y = 0;
    for (std::uint64_t e = 0; e < k; ++e) {
      // b's entry first only where it comes strictly before a's.
      const bool takeB =
          x == ak || (y < bk && mpcf::neighbour_less(mpcf::Neighbour<T>{bd[r * bk + y], bi[r * bk + y]},
                                                     mpcf::Neighbour<T>{ad[r * ak + x], ai[r * ak + x]}));
      if (takeB) {
        od[r * k + e] = bd[r * bk + y];
        oi[r * k + e] = bi[r * bk + y];
        ++y;
      } else {
        od[r * k + e] = ad[r * ak + x];
        oi[r * k + e] = ai[r * ak + x];
        ++x;
      }
    }
  }
}

// Whether [p, p + bytes) and [q, q + bytes2) share a byte.
bool overlap(const void* p, std::uint64_t bytes, const void* q, std::uint64_t bytes2) {
  if (bytes == 0 || bytes2 == 0 || p == nullptr || q == nullptr) return false;
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(q);
  return a < b + bytes2 && b < a + bytes;
}

}  // namespace

extern "C" {

mpcf_status mpcf_knn_check(uint64_t x_count, int64_t y_count, int component_axis, double p,
                           uint64_t k) {
  return api_entry("mpcf_knn_check", [&] {
    distance_spec(p);
    const bool withY = y_count >= 0;
    mpcf::check_knn_k(k, x_count, withY ? static_cast<std::uint64_t>(y_count) : 0, withY,
                      knn_noun(component_axis != 0));
  });
}

mpcf_status mpcf_knn_size(const mpcf_pcfs* X, uint64_t k, uint64_t* out) {
  return api_entry("mpcf_knn_size", [&] {
    require(X, "X");
    require(out, "out");
    *out = mpcf::checked_product(X->objects(), k, "the knn result");
  });
}

mpcf_status mpcf_knn_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, uint64_t k,
                           void* distances, int64_t* indices, uint64_t capacity,
                           const mpcf_options* options, mpcf_task** task) {
  return api_entry("mpcf_knn_start", [&] {
    require(task, "task");
    start_task(knn_task(X, Y, p, k, distances, indices, capacity, options), task);
  });
}

mpcf_status mpcf_knn(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, uint64_t k,
                     void* distances, int64_t* indices, uint64_t capacity,
                     const mpcf_options* options) {
  return api_entry("mpcf_knn", [&] {
    forget_last_run();
    run_task(knn_task(X, Y, p, k, distances, indices, capacity, options));
  });
}

mpcf_status mpcf_knn_both_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, uint64_t k_x,
                                uint64_t k_y, void* x_distances, int64_t* x_indices,
                                uint64_t x_capacity, void* y_distances, int64_t* y_indices,
                                uint64_t y_capacity, const mpcf_options* options,
                                mpcf_task** task) {
  return api_entry("mpcf_knn_both_start", [&] {
    require(task, "task");
    start_task(knn_both_task(X, Y, p, k_x, k_y, x_distances, x_indices, x_capacity, y_distances,
                             y_indices, y_capacity, options),
               task);
  });
}

mpcf_status mpcf_knn_both(const mpcf_pcfs* X, const mpcf_pcfs* Y, double p, uint64_t k_x,
                          uint64_t k_y, void* x_distances, int64_t* x_indices,
                          uint64_t x_capacity, void* y_distances, int64_t* y_indices,
                          uint64_t y_capacity, const mpcf_options* options) {
  return api_entry("mpcf_knn_both", [&] {
    forget_last_run();
    run_task(knn_both_task(X, Y, p, k_x, k_y, x_distances, x_indices, x_capacity, y_distances,
                           y_indices, y_capacity, options));
  });
}

mpcf_status mpcf_knn_merge(mpcf_dtype dtype, uint64_t rows, uint64_t k, const void* a_distances,
                           const int64_t* a_indices, uint64_t a_k, const void* b_distances,
                           const int64_t* b_indices, uint64_t b_k, void* distances,
                           int64_t* indices, uint64_t capacity) {
  return api_entry("mpcf_knn_merge", [&] {
    check_dtype(dtype);
    if (k == 0) throw InvalidArgument("k = 0; k must be at least 1");
    if (k > b_k && k - b_k > a_k) {  // k > a_k + b_k, without overflow
      std::ostringstream os;
      os << "k = " << k << " is more than a_k + b_k = " << a_k << " + " << b_k
         << ", the entries of a row of both lists; k must be at most that";
      throw InvalidArgument(os.str());
    }
    const std::uint64_t size = dtype == MPCF_FLOAT32 ? 4 : 8;
    const std::uint64_t aCount = mpcf::checked_product(rows, a_k, "list a");
    const std::uint64_t bCount = mpcf::checked_product(rows, b_k, "list b");
    const std::uint64_t need = mpcf::checked_product(rows, k, "the merged lists");
    if (aCount > 0) {
      require(a_distances, "a_distances");
      require(a_indices, "a_indices");
    }
    if (bCount > 0) {
      require(b_distances, "b_distances");
      require(b_indices, "b_indices");
    }
    check_capacity(need, capacity, distances, "distances");
    check_capacity(need, capacity, indices, "indices");
    const std::uint64_t outBytes = mpcf::checked_product(need, 8, "the merged lists");
    const std::uint64_t aBytes = mpcf::checked_product(aCount, 8, "list a");
    const std::uint64_t bBytes = mpcf::checked_product(bCount, 8, "list b");
    // Counts times 8 do not overflow (checked above), so counts times size
    // (4 or 8) do not either.
    const std::pair<const void*, std::uint64_t> inputs[] = {
        {a_distances, aCount * size}, {a_indices, aBytes},
        {b_distances, bCount * size}, {b_indices, bBytes}};
    for (const auto& [ptr, bytes] : inputs) {
      if (overlap(distances, need * size, ptr, bytes) || overlap(indices, outBytes, ptr, bytes)) {
        throw InvalidArgument("the outputs (distances, indices) overlap an input list; "
                              "mpcf_knn_merge writes to memory of its own");
      }
    }
    if (overlap(distances, need * size, indices, outBytes)) {
      throw InvalidArgument("distances and indices overlap");
    }
    if (dtype == MPCF_FLOAT32) {
      knn_merge(rows, k, static_cast<const float*>(a_distances), a_indices, a_k,
                static_cast<const float*>(b_distances), b_indices, b_k,
                static_cast<float*>(distances), indices);
    } else {
      knn_merge(rows, k, static_cast<const double*>(a_distances), a_indices, a_k,
                static_cast<const double*>(b_distances), b_indices, b_k,
                static_cast<double*>(distances), indices);
    }
  });
}

mpcf_status mpcf_kernel_matvec_size(const mpcf_pcfs* X, uint64_t r, uint64_t* out) {
  return api_entry("mpcf_kernel_matvec_size", [&] {
    require(X, "X");
    require(out, "out");
    *out = mpcf::checked_product(X->objects(), r, "the mat-vec result");
  });
}

mpcf_status mpcf_kernel_matvec_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_kernel kernel,
                                     double p, double scale, const void* V, uint64_t v_elements,
                                     uint64_t r, void* out, uint64_t capacity,
                                     const mpcf_options* options, mpcf_task** task) {
  return api_entry("mpcf_kernel_matvec_start", [&] {
    require(task, "task");
    start_task(matvec_task(X, Y, kernel, p, scale, V, v_elements, r, out, capacity, options), task);
  });
}

mpcf_status mpcf_kernel_matvec(const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_kernel kernel,
                               double p, double scale, const void* V, uint64_t v_elements,
                               uint64_t r, void* out, uint64_t capacity,
                               const mpcf_options* options) {
  return api_entry("mpcf_kernel_matvec", [&] {
    forget_last_run();
    run_task(matvec_task(X, Y, kernel, p, scale, V, v_elements, r, out, capacity, options));
  });
}

mpcf_status mpcf_pdist_stream_start(const mpcf_pcfs* X, double p, mpcf_block_callback callback,
                                    void* user, const mpcf_options* options, mpcf_task** task) {
  return api_entry("mpcf_pdist_stream_start", [&] {
    require(task, "task");
    auto owner = std::make_shared<CallbackOwner>();
    start_task(stream_task(X, nullptr, distance_spec(p), callback, user, options, owner), task,
               owner.get());
  });
}

mpcf_status mpcf_pdist_stream(const mpcf_pcfs* X, double p, mpcf_block_callback callback,
                              void* user, const mpcf_options* options) {
  return api_entry("mpcf_pdist_stream", [&] {
    forget_last_run();
    run_task(stream_task(X, nullptr, distance_spec(p), callback, user, options,
                         std::make_shared<CallbackOwner>()));
  });
}

mpcf_status mpcf_cdist_stream_start(const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_metric metric,
                                    double p, mpcf_block_callback callback, void* user,
                                    const mpcf_options* options, mpcf_task** task) {
  return api_entry("mpcf_cdist_stream_start", [&] {
    require(task, "task");
    require(Y, "Y");
    auto owner = std::make_shared<CallbackOwner>();
    start_task(stream_task(X, Y, cross_spec(metric, p), callback, user, options, owner), task,
               owner.get());
  });
}

mpcf_status mpcf_cdist_stream(const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_metric metric, double p,
                              mpcf_block_callback callback, void* user,
                              const mpcf_options* options) {
  return api_entry("mpcf_cdist_stream", [&] {
    forget_last_run();
    require(Y, "Y");
    run_task(stream_task(X, Y, cross_spec(metric, p), callback, user, options,
                         std::make_shared<CallbackOwner>()));
  });
}

}  // extern "C"
