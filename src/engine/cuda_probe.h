// Probing the CUDA side of the environment. cuda_probe.cpp (built only when TENSORACLE_BUILD_CUDA
// is ON) asks the CUDA runtime, cuBLASLt and cuDNN; cuda_probe_stub.cpp reports that this build
// has no CUDA.
#pragma once

#include <optional>
#include <string>

#include "tensoracle/environment.h"

namespace tensoracle {

struct CudaProbe {
  std::optional<GpuProperties> gpu;  // device 0
  std::optional<CudaVersions> cuda;
  std::string unavailable_reason;    // set when gpu or cuda is empty
};

CudaProbe probe_cuda();

}  // namespace tensoracle
