#include "backends/cuda/kernels/pointwise_device.cuh"
#include "backends/cuda/kernels/quantize_kernel.h"

namespace tensoracle::backends::cuda {

namespace {

__global__ void quantize_kernel(const void* __restrict__ x, const void* __restrict__ scale, void* __restrict__ y,
                                QuantizeArgs a) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = a.channels > 1 ? (i / a.inner) % a.channels : 0;
    const float s = device::load<float>(scale, c, a.scale_type);
    const float v = device::load<float>(x, i, a.in_type);
    if (a.dequantize) {
      device::store<float>(y, i, a.out_type, device::round_to<float>(v * s, a.out_type));
    } else {
      device::store_quantized(y, i, a.out_type, v / s);
    }
  }
}

// The activations' quantize (one fp32 scale, a float input, int8 or fp8 out) with the types as
// template arguments: the general kernel's per-element type switches and scale load cost it
// several times the memory time (0.14 ms for 25.7 M fp16 elements on an H100, docs/perf/gpu-log.md
// 2026-12-06). Same arithmetic.
template <DataType kIn, DataType kOut>
__global__ void quantize_per_tensor_kernel(const void* __restrict__ x, const float* __restrict__ scale,
                                           void* __restrict__ y, int64_t count) {
  const float s = *scale;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    device::store_quantized(y, i, kOut, device::load<float>(x, i, kIn) / s);
}

constexpr int kThreads = 256;

template <DataType kIn>
bool launch_per_tensor(const void* x, const void* scale, void* y, const QuantizeArgs& a, cudaStream_t stream) {
  const auto launch = [&](auto kernel) {
    kernel<<<device::grid_for(a.count, kThreads), kThreads, 0, stream>>>(x, static_cast<const float*>(scale), y, a.count);
    return true;
  };
  switch (a.out_type) {
    case DataType::kInt8: return launch(quantize_per_tensor_kernel<kIn, DataType::kInt8>);
    case DataType::kFloat8E4M3: return launch(quantize_per_tensor_kernel<kIn, DataType::kFloat8E4M3>);
    default: return false;
  }
}

// Whether the specialized kernel took the launch.
bool launch_specialized(const void* x, const void* scale, void* y, const QuantizeArgs& a, cudaStream_t stream) {
  if (a.dequantize || a.channels != 1 || a.scale_type != DataType::kFloat32) return false;
  switch (a.in_type) {
    case DataType::kFloat32: return launch_per_tensor<DataType::kFloat32>(x, scale, y, a, stream);
    case DataType::kFloat16: return launch_per_tensor<DataType::kFloat16>(x, scale, y, a, stream);
    case DataType::kBFloat16: return launch_per_tensor<DataType::kBFloat16>(x, scale, y, a, stream);
    default: return false;
  }
}

}  // namespace

cudaError_t launch_quantize(const void* x, const void* scale, void* y, const QuantizeArgs& args, cudaStream_t stream) {
  if (args.count == 0) return cudaSuccess;
  if (args.channels <= 0 || args.inner <= 0) return cudaErrorInvalidValue;
  if (launch_specialized(x, scale, y, args, stream)) return cudaGetLastError();
  quantize_kernel<<<device::grid_for(args.count, kThreads), kThreads, 0, stream>>>(x, scale, y, args);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
