// The device side of the Q/DQ-fused convolution (qconv_plan.h) that cuDNN does not do.
//
// launch_pack_channels_last: a 1-byte (int8 / fp8) [A, C, B1, B2] operand read through its
// element strides, written packed as [Ap, B1, B2, Cp] with zero bytes for a >= A or c >= C (zero
// is 0 in int8 and +0 in e4m3, so padded channels add nothing to the convolution's sums).
//
// launch_quantized_conv_epilogue: y[n, k, h, w] from the accumulator acc, packed NHWC
// [N, H, W, Kp] (int32 for int8, fp32 for fp8), each step rounded to the type the unfused layers
// would round it to (the CPU reference's order, computed in fp64):
//   p = round_T(acc · sx · sw[k | 0] [+ bias[k]])   the convolution of the dequantized operands
//   p = round_T(op(p [, operand]))                  for each fused pointwise layer, in order
//   y = Q(p): int8 rint(p / sy) saturated, NaN -> 0; fp8 e4m3 round to nearest even, saturated
//       (fp32 division, as quantize_kernel.h)         optional; else y = p
// Scales are fp32 (the only ones qconv_plan.h fuses) and T is fp32, fp16 or bf16; anything else
// is cudaErrorInvalidValue.
// The only difference from the reference is in the first line: the reference sums the products
// of the separately rounded dequantized values where this scales the exact integer sum (fp8:
// the fp32 sum) once (docs/quantization.md, "How close a fused kernel can be").
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/cudnn/conv_kernels.h"
#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct PackChannelsLastArgs {
  const void* data = nullptr;
  int64_t shape[4] = {};   // A, C, B1, B2
  int64_t stride[4] = {};  // elements, over the same dims
  int64_t padded_a = 0, padded_c = 0;  // Ap >= A, Cp >= C
  void* packed = nullptr;
};

cudaError_t launch_pack_channels_last(const PackChannelsLastArgs& args, cudaStream_t stream);

struct QuantizedConvEpilogueArgs {
  DataType acc_type = DataType::kInt32;  // int32 or fp32
  int64_t acc_channels = 0;              // Kp >= K
  int64_t shape[4] = {};                 // y's [N, K, H, W]
  int64_t y_stride[4] = {};              // elements, over the same dims
  DataType product_type = DataType::kFloat32;
  const void* x_scale = nullptr;
  DataType x_scale_type = DataType::kFloat32;
  const void* w_scale = nullptr;  // one value, or K when w_per_channel
  DataType w_scale_type = DataType::kFloat32;
  bool w_per_channel = false;
  // The bias ([K], stride[1] 1) and the fused pointwise layers, their operands of product_type
  // addressed over [N, K, D, H, W] (D = 1) as the convolution epilogue kernel addresses them.
  EpilogueLaunch epilogue;
  const void* y_scale = nullptr;  // the trailing quantize's scale, or null
  DataType y_scale_type = DataType::kFloat32;
  DataType output_type = DataType::kFloat32;  // product_type, or int8 / fp8e4m3 with y_scale
};

cudaError_t launch_quantized_conv_epilogue(const void* acc, void* y, const QuantizedConvEpilogueArgs& args,
                                           cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
