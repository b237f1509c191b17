// The CUDA factories for dtype double (see cuda_matrix_integrate_impl.cuh).
#include "cuda_matrix_integrate_impl.cuh"

namespace mpcf::cuda {

template std::unique_ptr<Work> make_pairwise_task<double>(std::shared_ptr<const PcfCollection<double>>,
                                                        OperationSpec, Window<double>, double*,
                                                        SymmetricLayout,
                                                        const CudaExecutionConfig&);
template std::unique_ptr<Work> make_cross_task<double>(std::shared_ptr<const PcfCollection<double>>,
                                                     std::shared_ptr<const PcfCollection<double>>,
                                                     OperationSpec, Window<double>, double*,
                                                     const CudaExecutionConfig&);

}  // namespace mpcf::cuda
