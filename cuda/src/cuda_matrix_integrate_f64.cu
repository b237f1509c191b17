// The CUDA factory for dtype double (see cuda_matrix_integrate_impl.cuh).
#include "cuda_matrix_integrate_impl.cuh"

namespace mpcf::cuda {

template std::unique_ptr<Work> make_work<double>(PairRequest<double>, const CudaExecutionConfig&);

}  // namespace mpcf::cuda
