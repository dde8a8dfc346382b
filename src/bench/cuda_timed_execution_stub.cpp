// Builds without CUDA: a cuda engine cannot have been restored, so this is never reached with
// one; it says so anyway rather than assume.
#include "bench/timed_execution.h"
#include "core/errors.h"

namespace tensoracle::bench {

Result<std::unique_ptr<TimedExecution>> make_cuda_timed_execution(Execution, const Engine&, const NamedArrayViews&) {
  return unsupported("timing a cuda engine needs a build with CUDA (TENSORACLE_BUILD_CUDA=ON)");
}

}  // namespace tensoracle::bench
