// The grid-sample kernel: PyTorch's F.grid_sample on [N, C, H, W] with an [N, Ho, Wo, 2] grid of
// normalized (x, y) coordinates (docs/ops.md "Grid sample"), bilinear or nearest, zeros or
// border padding, with or without align_corners.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct GridSampleArgs {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t out_h = 0, out_w = 0;        // grid
  bool align_corners = false;
  bool border = false;   // else zeros
  bool nearest = false;  // else bilinear
};

// fp32 (computed in fp64, as the reference), fp16 and bf16 (in fp32); the grid has the input's type.
cudaError_t launch_grid_sample(DataType type, const void* in, const void* grid, void* out, const GridSampleArgs& args,
                               cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
