#include "mpcf/core/matrix_integrate.hpp"

namespace mpcf {

int resolve_thread_count(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

template <typename T>
std::unique_ptr<Work> make_cpu_work(PairRequest<T> request, const CpuExecutionConfig& cfg) {
  if (!request.x || !request.y || !request.consumer) {
    throw std::logic_error("make_cpu_work: incomplete request");
  }
  const OperationSpec spec = request.op;
  if (request.linear) {
    // Piecewise linear functions: single functions in blocks (the SIMD PLF
    // walk), objects of several components one pair at a time.
    return dispatch_plf_operation<T>(spec, [&](auto op) -> std::unique_ptr<Work> {
      using Op = decltype(op);
      if (request.components > 1) {
        PlfObjectPair<T, Op> value{request.x, request.y, request.components, request.window, op};
        return std::make_unique<CpuPairValueTask<T, PlfObjectPair<T, Op>>>(std::move(request),
                                                                           std::move(value), cfg);
      }
      return std::make_unique<CpuBlockTask<T, Op>>(std::move(request), op, cfg);
    });
  }
  return dispatch_operation<T>(spec, [&](auto op) -> std::unique_ptr<Work> {
    using Op = decltype(op);
    if (request.components > 1) {
      PcfObjectPair<T, Op> value{request.x, request.y, request.components, request.window, op};
      return std::make_unique<CpuPairValueTask<T, PcfObjectPair<T, Op>>>(std::move(request),
                                                                         std::move(value), cfg);
    }
    return std::make_unique<CpuBlockTask<T, Op>>(std::move(request), op, cfg);
  });
}

template std::unique_ptr<Work> make_cpu_work<float>(PairRequest<float>, const CpuExecutionConfig&);
template std::unique_ptr<Work> make_cpu_work<double>(PairRequest<double>, const CpuExecutionConfig&);

}  // namespace mpcf
