// The CUDA side of the environment (environment.h): device 0's properties and the versions of
// the CUDA runtime, the driver, cuBLASLt and cuDNN this process uses, or why there are none.
#pragma once

#include "tensoracle/environment.h"

namespace tensoracle::backends::cuda {

// Sets environment.gpu and environment.cuda, or environment.cuda_unavailable_reason.
void probe_cuda(Environment& environment);

}  // namespace tensoracle::backends::cuda
