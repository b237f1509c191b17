// The factory of cuda_matrix_integrate_api.hpp, as a template (single PCFs
// to PcfBlockOp, objects of several PCFs to ObjectBlockOp, PLFs to
// make_plf_work); instantiated once per dtype in cuda_matrix_integrate_f32.cu
// / _f64.cu (two translation units so the kernels of the two dtypes compile
// in parallel). The PLF kernels are in cuda_plf_f32.cu / _f64.cu, built
// without fused multiply-adds (cuda/CMakeLists.txt; see plf_lane_walk.cuh).
#pragma once

#include <memory>
#include <utility>

#include "mpcf/core/operations.hpp"
#include "mpcf/core/plf_operations.hpp"
#include "mpcf/core/plf_walk.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"

namespace mpcf::cuda {

// PLFs (single or objects of several): cuda_plf_impl.cuh.
template <typename T>
std::unique_ptr<Work> make_plf_work(const PairRequest<T>& request, std::vector<int> devices,
                                    const CudaExecutionConfig& cfg);
extern template std::unique_ptr<Work> make_plf_work<float>(const PairRequest<float>&,
                                                           std::vector<int>,
                                                           const CudaExecutionConfig&);
extern template std::unique_ptr<Work> make_plf_work<double>(const PairRequest<double>&,
                                                            std::vector<int>,
                                                            const CudaExecutionConfig&);

template <typename T>
std::unique_ptr<Work> make_work(PairRequest<T> request, const CudaExecutionConfig& cfg) {
  if (!request.x || !request.y || !request.consumer) {
    throw std::logic_error("cuda::make_work: incomplete request");
  }
  std::vector<int> devices = validated_devices(cfg);
  if (request.linear) {
    return make_plf_work<T>(request, std::move(devices), cfg);
  }
  return dispatch_operation<T>(request.op, [&](auto op) -> std::unique_ptr<Work> {
    if (request.components > 1) {
      return make_object_task<T, decltype(op), PairWalk>(request, op, devices, cfg);
    }
    return make_pcf_task<T>(request, op, devices, cfg);
  });
}

}  // namespace mpcf::cuda
