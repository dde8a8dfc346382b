// The CUDA probe of a build without CUDA (TENSORACLE_BUILD_CUDA=OFF).
#include "engine/cuda_probe.h"

namespace tensoracle {

CudaProbe probe_cuda() {
  CudaProbe probe;
  probe.unavailable_reason = "no CUDA in this build (configured with TENSORACLE_BUILD_CUDA=OFF)";
  return probe;
}

}  // namespace tensoracle
