// The gather kernel: y[o, j, i] = data[o, index[j], i] over data viewed as [outer, axis_size,
// inner] (docs/ops.md "Gather"). Negative indices count from the end as in the reference. An
// index outside [-axis_size, axis_size) -- a run-time error on the CPU, which a kernel cannot
// return -- is clamped into [0, axis_size), so a bad index never reads out of bounds.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tensoracle::backends::cuda {

struct GatherArgs {
  int64_t outer = 1;
  int64_t axis_size = 1;  // > 0 whenever there is anything to gather
  int64_t indices = 0;    // number of indices
  int64_t inner = 1;      // elements per gathered row
};

// `indices` are int64 when index64, else int32. Rows move in words of up to 16 bytes when their
// size and the buffers' alignment allow it.
cudaError_t launch_gather(const void* data, const void* indices, bool index64, void* out, size_t element_size,
                          const GatherArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
