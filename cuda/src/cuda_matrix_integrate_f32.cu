// The CUDA factories for dtype float (see cuda_matrix_integrate_impl.cuh).
#include "cuda_matrix_integrate_impl.cuh"

namespace mpcf::cuda {

template std::unique_ptr<Work> make_pairwise_task<float>(std::shared_ptr<const PcfCollection<float>>,
                                                        OperationSpec, Window<float>, float*,
                                                        SymmetricLayout,
                                                        const CudaExecutionConfig&);
template std::unique_ptr<Work> make_cross_task<float>(std::shared_ptr<const PcfCollection<float>>,
                                                     std::shared_ptr<const PcfCollection<float>>,
                                                     OperationSpec, Window<float>, float*,
                                                     const CudaExecutionConfig&);

}  // namespace mpcf::cuda
