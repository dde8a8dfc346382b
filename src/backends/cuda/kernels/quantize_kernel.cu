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

// The same, 8 elements a thread: one or two 16-byte loads and one 8-byte store instead of 8 narrow
// ones (the scalar form still ran at a fifth of the memory bandwidth: 0.1 ms for 25.7 M fp16
// elements on an H200, docs/perf/gpu-log.md 2026-12-06 23:05). x must be 16-byte aligned and y
// 8-byte aligned; the last count % 8 elements go one a thread.
constexpr int kVector = 8;
template <DataType kIn, DataType kOut>
__global__ void quantize_per_tensor_vector_kernel(const void* __restrict__ x, const float* __restrict__ scale,
                                                  void* __restrict__ y, int64_t count) {
  constexpr int kLoads = kIn == DataType::kFloat32 ? 2 : 1;  // 16-byte loads per 8 elements
  const float s = *scale;
  const int64_t groups = count / kVector;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = first; g < groups; g += stride) {
    uint4 in[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) in[k] = static_cast<const uint4*>(x)[g * kLoads + k];
    uint2 out;
#pragma unroll
    for (int e = 0; e < kVector; ++e)
      device::store_quantized(&out, e, kOut, device::load<float>(in, e, kIn) / s);
    static_cast<uint2*>(y)[g] = out;
  }
  for (int64_t i = groups * kVector + first; i < count; i += stride)
    device::store_quantized(y, i, kOut, device::load<float>(x, i, kIn) / s);
}

// Dequantize (int8 or fp8 e4m3 in, fp32 scales, a float out) with the types as template
// arguments, per tensor or per channel, one element a thread. Same arithmetic as quantize_kernel.
template <DataType kIn, DataType kOut>
__global__ void dequantize_typed_kernel(const void* __restrict__ x, const float* __restrict__ scale,
                                        void* __restrict__ y, int64_t count, int64_t channels, int64_t inner) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float s = scale[channels > 1 ? (i / inner) % channels : 0];
    device::store<float>(y, i, kOut, device::round_to<float>(device::load<float>(x, i, kIn) * s, kOut));
  }
}

// The same, 8 elements a thread: one 8-byte load and one or two 16-byte stores. x must be 8-byte
// and y 16-byte aligned, and the 8 elements share their scale (per tensor, or `inner` a multiple
// of 8); the last count % 8 elements go one a thread.
template <DataType kIn, DataType kOut>
__global__ void dequantize_vector_kernel(const void* __restrict__ x, const float* __restrict__ scale,
                                         void* __restrict__ y, int64_t count, int64_t channels, int64_t inner) {
  constexpr int kStores = kOut == DataType::kFloat32 ? 2 : 1;  // 16-byte stores per 8 elements
  const int64_t groups = count / kVector;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = first; g < groups; g += stride) {
    const float s = scale[channels > 1 ? (g * kVector / inner) % channels : 0];
    const uint2 in = static_cast<const uint2*>(x)[g];
    uint4 out[kStores];
#pragma unroll
    for (int e = 0; e < kVector; ++e)
      device::store<float>(out, e, kOut, device::round_to<float>(device::load<float>(&in, e, kIn) * s, kOut));
#pragma unroll
    for (int k = 0; k < kStores; ++k) static_cast<uint4*>(y)[g * kStores + k] = out[k];
  }
  for (int64_t i = groups * kVector + first; i < count; i += stride) {
    const float s = scale[channels > 1 ? (i / inner) % channels : 0];
    device::store<float>(y, i, kOut, device::round_to<float>(device::load<float>(x, i, kIn) * s, kOut));
  }
}

constexpr int kThreads = 256;

template <DataType kIn, DataType kOut>
void launch_dequantize(const void* x, const void* scale, void* y, const QuantizeArgs& a, cudaStream_t stream) {
  const auto* s = static_cast<const float*>(scale);
  const bool vector = reinterpret_cast<uintptr_t>(x) % 8 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0 &&
                      (a.channels == 1 || a.inner % kVector == 0);
  if (vector)
    dequantize_vector_kernel<kIn, kOut><<<device::grid_for((a.count + kVector - 1) / kVector, kThreads), kThreads, 0, stream>>>(
        x, s, y, a.count, a.channels, a.inner);
  else
    dequantize_typed_kernel<kIn, kOut><<<device::grid_for(a.count, kThreads), kThreads, 0, stream>>>(x, s, y, a.count,
                                                                                                    a.channels, a.inner);
}

template <DataType kIn>
bool launch_dequantize_to(const void* x, const void* scale, void* y, const QuantizeArgs& a, cudaStream_t stream) {
  switch (a.out_type) {
    case DataType::kFloat32: launch_dequantize<kIn, DataType::kFloat32>(x, scale, y, a, stream); return true;
    case DataType::kFloat16: launch_dequantize<kIn, DataType::kFloat16>(x, scale, y, a, stream); return true;
    case DataType::kBFloat16: launch_dequantize<kIn, DataType::kBFloat16>(x, scale, y, a, stream); return true;
    default: return false;
  }
}

template <DataType kIn>
bool launch_per_tensor(const void* x, const void* scale, void* y, const QuantizeArgs& a, cudaStream_t stream) {
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 8 == 0;
  const auto launch = [&](auto vector_kernel, auto scalar_kernel) {
    const auto* s = static_cast<const float*>(scale);
    if (aligned)
      vector_kernel<<<device::grid_for((a.count + kVector - 1) / kVector, kThreads), kThreads, 0, stream>>>(x, s, y, a.count);
    else
      scalar_kernel<<<device::grid_for(a.count, kThreads), kThreads, 0, stream>>>(x, s, y, a.count);
    return true;
  };
  switch (a.out_type) {
    case DataType::kInt8:
      return launch(quantize_per_tensor_vector_kernel<kIn, DataType::kInt8>, quantize_per_tensor_kernel<kIn, DataType::kInt8>);
    case DataType::kFloat8E4M3:
      return launch(quantize_per_tensor_vector_kernel<kIn, DataType::kFloat8E4M3>,
                    quantize_per_tensor_kernel<kIn, DataType::kFloat8E4M3>);
    default: return false;
  }
}

// Whether a specialized kernel took the launch.
bool launch_specialized(const void* x, const void* scale, void* y, const QuantizeArgs& a, cudaStream_t stream) {
  if (a.scale_type != DataType::kFloat32) return false;
  if (a.dequantize) {
    switch (a.in_type) {
      case DataType::kInt8: return launch_dequantize_to<DataType::kInt8>(x, scale, y, a, stream);
      case DataType::kFloat8E4M3: return launch_dequantize_to<DataType::kFloat8E4M3>(x, scale, y, a, stream);
      default: return false;
    }
  }
  if (a.channels != 1) return false;
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
