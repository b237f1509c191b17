// Definitions of the opaque handle types of the C API.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/mpcf.h"

namespace mpcf::capi {
// The norms of a handle's objects (kernel mat-vec's bounds) from its last
// L2 mat-vec: a handle's collection is set once and never changes, so the
// next one on the same window and components takes them instead of
// computing them again (the same values: they come from the same data).
struct NormsMemo {
  std::mutex mutex;
  bool kept = false;
  double a = 0, b = 0;  // the window
  std::uint64_t components = 0;
  std::vector<FunctionNorms> norms;
};
}  // namespace mpcf::capi

struct mpcf_pcfs {
  mpcf_dtype dtype = MPCF_FLOAT64;
  mpcf_function_type type = MPCF_PIECEWISE_CONSTANT;
  std::shared_ptr<const mpcf::PcfCollection<float>> f32;
  std::shared_ptr<const mpcf::PcfCollection<double>> f64;
  std::vector<std::uint64_t> shape;
  // The last axis of `shape` is a component axis (mpcf_pcfs_set_component_axis).
  bool component_axis = false;
  mutable mpcf::capi::NormsMemo norms_memo;

  std::uint64_t count() const { return dtype == MPCF_FLOAT32 ? f32->count() : f64->count(); }
  // Functions per object, and the objects every computation runs over.
  std::uint64_t components() const { return component_axis ? shape.back() : 1; }
  std::uint64_t objects() const { return count() / components(); }
  bool linear() const { return type == MPCF_PIECEWISE_LINEAR; }
  std::uint64_t total_breakpoints() const {
    return dtype == MPCF_FLOAT32 ? f32->data().total_elements() : f64->data().total_elements();
  }
  template <typename T>
  const std::shared_ptr<const mpcf::PcfCollection<T>>& get() const {
    if constexpr (std::is_same_v<T, float>) {
      return f32;
    } else {
      return f64;
    }
  }
};

struct mpcf_options {
  mpcf_backend backend = MPCF_BACKEND_AUTO;
  int threads = 0;
  double window_a = -std::numeric_limits<double>::infinity();
  double window_b = std::numeric_limits<double>::infinity();
  std::uint64_t split_hint = 0;
  std::uint64_t min_block_side = 0;
  std::uint64_t max_block_elements = 0;
  double cuda_threshold = 2e8;
  std::vector<int> devices;
  double memory_fraction = 0.8;
};

namespace mpcf::capi {
// What a computation runs on and how much work it is (mpcf_task_info, less
// the seconds, which its Task measures): set where its work is made.
struct RunInfo {
  mpcf_backend backend = MPCF_BACKEND_CPU;
  mpcf_backend_reason reason = MPCF_REASON_REQUESTED;
  int threads = 0;
  std::vector<int> devices;
  double merge_steps = 0.0;
};
}  // namespace mpcf::capi

struct mpcf_task {
  std::unique_ptr<mpcf::Task> task;
  mpcf::capi::RunInfo run;
};
