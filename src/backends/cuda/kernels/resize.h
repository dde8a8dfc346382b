// The resize kernel: nearest / linear over up to 3 trailing dims (docs/ops.md "Resize"), the
// input viewed as [planes, in0, in1, in2] (unused leading spatial dims have size 1). Which input
// positions each output coordinate reads, and with what weight, is computed on the host exactly
// as the reference does and passed as a device table, so kernels only blend.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

// Output coordinate o of a dim reads i0 with weight 1 - w1 and i1 with weight w1.
struct ResizeTap {
  int64_t i0 = 0, i1 = 0;
  double w1 = 0;
};

struct ResizeArgs {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  const ResizeTap* taps = nullptr;  // device: out[0] taps of dim 0, then out[1] of dim 1, then out[2]
};

// fp32 (blended in fp64, as the reference), fp16 and bf16 (in fp32).
cudaError_t launch_resize(DataType type, const void* in, void* out, const ResizeArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
