// The CUDA factory of PLF requests (single PLFs and objects of several):
// ObjectBlockOp with PlfPairWalk, whose kernels take the lane walk on the
// tame path (plf_lane_walk.cuh). Instantiated in cuda_plf_f32.cu /
// cuda_plf_f64.cu, which cuda/CMakeLists.txt compiles with --fmad=false:
// without contraction every operation but a non-integer Lp gives the CPU's
// bits (core is built with -ffp-contract=off).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "mpcf/core/plf_operations.hpp"
#include "mpcf/core/plf_walk.hpp"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"

namespace mpcf::cuda {

template <typename T>
std::unique_ptr<Work> make_plf_work(const PairRequest<T>& request, std::vector<int> devices,
                                    const CudaExecutionConfig& cfg) {
  return dispatch_plf_operation<T>(request.op, [&](auto op) -> std::unique_ptr<Work> {
    return make_object_task<T, decltype(op), PlfPairWalk>(request, op, std::move(devices), cfg);
  });
}

}  // namespace mpcf::cuda
