// Quantize and dequantize kernels, bit-exact with src/backends/cpu/quantize.cpp:
//   quantize:   v = float(x) / float(scale) (fp32 division); int8: round half to even, saturate
//               to [-128, 127], NaN -> 0; fp8 e4m3: round to nearest even, saturating (+-448),
//               NaN stays NaN (float_formats.h, hand-written on the device; not __nv_fp8_e4m3).
//   dequantize: y = float(q) * float(scale), rounded to the output type.
// The scale of flat element i is scale[(i / inner) % channels] (per-channel) or scale[0].
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct QuantizeArgs {
  bool dequantize = false;
  int64_t count = 0;
  int64_t channels = 1, inner = 1;  // channels == 1: one scale for the tensor
  DataType in_type = DataType::kFloat32;
  DataType scale_type = DataType::kFloat32;
  DataType out_type = DataType::kInt8;
};

cudaError_t launch_quantize(const void* x, const void* scale, void* y, const QuantizeArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
