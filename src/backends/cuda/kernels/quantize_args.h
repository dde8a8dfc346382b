// How a quantize or dequantize layer maps onto launch_quantize (quantize_kernel.h): host code,
// shared by the quantize families and the Q/DQ-fused matmul's explicit path.
#pragma once

#include "backends/cuda/kernels/quantize_kernel.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {

// The arguments that run quantize or dequantize layer `node` on `input` with `scale`, producing
// `out_type`: a [C] scale with C != 1 is per-channel along the layer's axis, any other one scale.
Result<QuantizeArgs> quantize_args_of(const Node& node, const TensorDesc& input, const TensorDesc& scale, DataType out_type);

}  // namespace tensoracle::backends::cuda
