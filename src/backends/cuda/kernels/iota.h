// The iota kernel: out[i] = i for i in [0, n), int64 (docs/ops.md "Iota").
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tensoracle::backends::cuda {

cudaError_t launch_iota(int64_t* out, int64_t n, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
