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
  // Piecewise constant or linear, single functions or objects of several
  // components: one executor, the operation's walk.
  return dispatch_function_operation<T>(request.linear, spec,
                                        [&](auto op, auto) -> std::unique_ptr<Work> {
                                          using Op = decltype(op);
                                          return std::make_unique<CpuBlockTask<T, Op>>(
                                              std::move(request), op, cfg);
                                        });
}

template std::unique_ptr<Work> make_cpu_work<float>(PairRequest<float>, const CpuExecutionConfig&);
template std::unique_ptr<Work> make_cpu_work<double>(PairRequest<double>, const CpuExecutionConfig&);

}  // namespace mpcf
