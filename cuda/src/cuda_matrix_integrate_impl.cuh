// The factories of cuda_matrix_integrate_api.hpp, as templates; instantiated
// once per dtype in cuda_matrix_integrate_f32.cu / _f64.cu (two translation
// units so the kernels of the two dtypes compile in parallel).
#pragma once

#include <memory>
#include <utility>

#include "mpcf/core/operations.hpp"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"

namespace mpcf::cuda {

template <typename T>
std::unique_ptr<Work> make_pairwise_task(std::shared_ptr<const PcfCollection<T>> pcfs,
                                         OperationSpec spec, Window<T> window, T* out,
                                         SymmetricLayout layout, const CudaExecutionConfig& cfg) {
  if (!pcfs) throw InvalidArgument("make_pairwise_task: no collection");
  std::vector<int> devices = validated_devices(cfg);
  auto data = cuda_data_of<T>(std::move(pcfs));
  return dispatch_operation<T>(spec, [&](auto op) -> std::unique_ptr<Work> {
    using Op = decltype(op);
    if (spec.is_kernel()) {
      using W = SymmetricMatrixResultWriter<T>;
      return std::make_unique<CudaPairwiseIntegrationTask<T, Op, W>>(
          data, op, window, out, layout, TriangleSkipMode::LowerTriangle, devices, cfg);
    }
    using W = DistanceMatrixResultWriter<T>;
    return std::make_unique<CudaPairwiseIntegrationTask<T, Op, W>>(
        data, op, window, out, layout, TriangleSkipMode::LowerTriangleSkipDiag, devices, cfg);
  });
}

template <typename T>
std::unique_ptr<Work> make_cross_task(std::shared_ptr<const PcfCollection<T>> x,
                                      std::shared_ptr<const PcfCollection<T>> y, OperationSpec spec,
                                      Window<T> window, T* out, const CudaExecutionConfig& cfg) {
  if (!x || !y) throw InvalidArgument("make_cross_task: no collection");
  std::vector<int> devices = validated_devices(cfg);
  auto dx = cuda_data_of<T>(std::move(x));
  auto dy = cuda_data_of<T>(std::move(y));
  return dispatch_operation<T>(spec, [&](auto op) -> std::unique_ptr<Work> {
    using Op = decltype(op);
    return std::make_unique<CudaCrossIntegrationTask<T, Op>>(
        dx, dy, op, window, out, devices, cfg);
  });
}

}  // namespace mpcf::cuda
