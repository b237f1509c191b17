// The CUDA PLF kernels for dtype float (see cuda_plf_impl.cuh); compiled
// with --fmad=false (cuda/CMakeLists.txt).
#include "cuda_plf_impl.cuh"

namespace mpcf::cuda {

template std::unique_ptr<Work> make_plf_work<float>(const PairRequest<float>&, std::vector<int>,
                                                  const CudaExecutionConfig&);

}  // namespace mpcf::cuda
