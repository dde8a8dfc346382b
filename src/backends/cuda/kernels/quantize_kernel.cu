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

}  // namespace

cudaError_t launch_quantize(const void* x, const void* scale, void* y, const QuantizeArgs& args, cudaStream_t stream) {
  if (args.count == 0) return cudaSuccess;
  if (args.channels <= 0 || args.inner <= 0) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  quantize_kernel<<<device::grid_for(args.count, kThreads), kThreads, 0, stream>>>(x, scale, y, args);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
