// The convolution family's own kernels: a direct convolution / transposed convolution (the
// fallback for what cuDNN refuses) and the in-place epilogue (bias, then the fused pointwise
// chain) that follows a cuDNN convolution whose graph could not fuse them.
//
// Every tensor is addressed through element strides over the canonical 5-D index
// [N, C, D, H, W]: convolutions of 1 or 2 spatial dims have leading size-1 spatial dims (stride
// 0), as in the CPU reference, and any layout (linear, nhwc, a broadcast operand with stride-0
// dims) is just a set of strides. Accumulation and the epilogue are fp32; fp16/bf16 are storage.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tensoracle::backends::cuda {

enum class ConvElement : uint8_t { kFloat32, kFloat16, kBFloat16 };

// One fused pointwise operation applied to the running fp32 value v.
enum class EpilogueOpKind : uint8_t {
  kAddTensor,  // v + t[index]
  kMulTensor,  // v * t[index]
  kRelu,       // v < 0 ? 0 : v (NaN stays NaN, as in the reference)
  kSigmoid,
  kTanh,
  kGeluErf,
  kGeluTanh,
  kSilu,
};

struct ConvKernelTensor {
  const void* data = nullptr;
  int64_t stride[5] = {};  // elements, over [N, C, D, H, W]
};

struct EpilogueLaunch {
  static constexpr int kMaxOps = 8;
  ConvKernelTensor bias;  // data nullptr: no bias; stride[1] walks the channels
  int count = 0;
  EpilogueOpKind kind[kMaxOps] = {};
  ConvKernelTensor operand[kMaxOps];  // the tensor of kAddTensor / kMulTensor
};

// y[n, k, o] = epilogue(bias[k] + sum x * w), with the reference's index rules (docs/ops.md):
// convolution: x[n, g*C/G + c', o*stride - pre + t*dilation] * w[k, c', t];
// transposed:  every x[n, c, i] * w[c, k - g*K/G, t] lands on o = i*stride - pre + t*dilation.
struct DirectConvLaunch {
  ConvElement element = ConvElement::kFloat32;
  bool transposed = false;
  int64_t n = 0, c = 0, k = 0, groups = 1;  // c: channels of x, k: channels of y
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pre[3] = {0, 0, 0};
  ConvKernelTensor x;
  ConvKernelTensor w;  // over [K, C/G, kd, kh, kw] (transposed: [C, K/G, kd, kh, kw])
  void* y = nullptr;
  int64_t y_stride[5] = {};
  EpilogueLaunch epilogue;
};

// Launch status (cudaSuccess without launching when the output is empty).
cudaError_t launch_direct_conv(const DirectConvLaunch& args, cudaStream_t stream);

// y = epilogue(y + bias) in place, over the [N, C, D, H, W] `shape` of y.
cudaError_t launch_conv_epilogue(ConvElement element, const int64_t shape[5], void* y, const int64_t y_stride[5],
                                 const EpilogueLaunch& epilogue, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
