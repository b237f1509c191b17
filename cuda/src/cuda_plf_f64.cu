// The CUDA PLF kernels for dtype double (see cuda_plf_impl.cuh); compiled
// with --fmad=false (cuda/CMakeLists.txt).
#include "cuda_plf_impl.cuh"

namespace mpcf::cuda {

template std::unique_ptr<Work> make_plf_work<double>(const PairRequest<double>&, std::vector<int>,
                                                  const CudaExecutionConfig&);

}  // namespace mpcf::cuda
