// Layout reformats, which the planner inserts where a step needs another layout than its
// producer wrote (device_tensor.h "Layouts"): `in` and `out` have the same data type and logical
// shape and any two layouts (the same layout is a plain copy). One strided copy through each
// side's element strides; linear <-> nhwc goes through shared-memory tiles so that both sides are
// read and written in whole cache lines.
#pragma once

#include <cuda_runtime_api.h>

#include "backends/cuda/device_tensor.h"
#include "tensoracle/status.h"

namespace tensoracle::backends::cuda {

// Launches the copy on `stream` (nothing for an empty tensor). kInvalidArgument when the types or
// shapes differ, kUnsupported above rank 8, kCudaError when the launch fails.
Status launch_reformat(const DeviceTensor& in, const DeviceTensor& out, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
