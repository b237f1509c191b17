// The CUDA factory for dtype float (see cuda_matrix_integrate_impl.cuh).
#include "cuda_matrix_integrate_impl.cuh"

namespace mpcf::cuda {

template std::unique_ptr<Work> make_work<float>(PairRequest<float>, const CudaExecutionConfig&);

}  // namespace mpcf::cuda
