// For cuDNN SDPA: an additive mask that cuDNN cannot read through strides (broadcast along the
// keys, or batch dims that do not collapse to one stride) is first written out as a dense bias
// [bm, hm, lq, lk], where bm is 1 or the batch count B and hm is 1 or the head count H.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/device_tensor.h"
#include "tensoracle/status.h"

namespace tensoracle::backends::cuda {

struct DenseBiasArgs {
  const void* mask = nullptr;  // 2-byte elements (fp16 or bf16)
  void* bias = nullptr;        // [bm, hm, lq, lk], row-major
  int64_t bm = 1, hm = 1, heads = 1, lq = 0, lk = 0;
  // The mask broadcast to the scores [batch..., lq, lk]; the flattened batch index is
  // b * heads + h (the last batch dim is the heads).
  TensorGeometry mask_geometry;
};

// Launches on `stream`; nothing for an empty bias.
Status launch_dense_bias(const DenseBiasArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
