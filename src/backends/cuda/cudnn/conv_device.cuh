// Device-side pieces shared by the convolution kernels: fp32 loads and stores of the storage
// types, 5-D offsets, and the epilogue (conv_kernels.h) applied to one output element.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/cudnn/conv_kernels.h"

namespace tensoracle::backends::cuda::conv_device {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ int64_t offset(const int64_t stride[5], const int64_t idx[5]) {
  return idx[0] * stride[0] + idx[1] * stride[1] + idx[2] * stride[2] + idx[3] * stride[3] + idx[4] * stride[4];
}

// Splits the row-major linear index `i` over `shape` [N, C, D, H, W] into idx. `Index` uint32_t
// does the divisions in 32 bits (several times cheaper on the GPU) where i and the dims fit.
template <typename Index = int64_t>
__device__ __forceinline__ void unravel(int64_t i, const int64_t shape[5], int64_t idx[5]) {
  Index rest = static_cast<Index>(i);
#pragma unroll
  for (int d = 4; d >= 0; --d) {
    const Index extent = static_cast<Index>(shape[d]);
    idx[d] = static_cast<int64_t>(rest % extent);
    rest /= extent;
  }
}

template <typename T>
__device__ __forceinline__ float load(const ConvKernelTensor& t, const int64_t idx[5]) {
  return to_float(static_cast<const T*>(t.data)[offset(t.stride, idx)]);
}

// bias, then the fused operations in order; the formulas of docs/ops.md in fp32.
template <typename T>
__device__ __forceinline__ float apply_epilogue(float v, const EpilogueLaunch& e, const int64_t idx[5]) {
  if (e.bias.data) v += load<T>(e.bias, idx);
  for (int op = 0; op < e.count; ++op) {
    switch (e.kind[op]) {
      case EpilogueOpKind::kAddTensor: v += load<T>(e.operand[op], idx); break;
      case EpilogueOpKind::kMulTensor: v *= load<T>(e.operand[op], idx); break;
      case EpilogueOpKind::kRelu: v = v < 0.0f ? 0.0f : v; break;
      case EpilogueOpKind::kSigmoid: v = 1.0f / (1.0f + expf(-v)); break;
      case EpilogueOpKind::kTanh: v = tanhf(v); break;
      case EpilogueOpKind::kGeluErf: v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
      case EpilogueOpKind::kGeluTanh:
        v = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
        break;
      case EpilogueOpKind::kSilu: v = v / (1.0f + expf(-v)); break;
    }
  }
  return v;
}

inline unsigned grid_for(int64_t count, int threads) {
  const int64_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);  // grid-stride beyond
}

}  // namespace tensoracle::backends::cuda::conv_device
