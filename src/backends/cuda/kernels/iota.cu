#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/iota.h"

namespace tensoracle::backends::cuda {

namespace {

__global__ void iota_kernel(int64_t* __restrict__ out, int64_t n) {
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[t] = t;
}

}  // namespace

cudaError_t launch_iota(int64_t* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  iota_kernel<<<grid_blocks(n, kThreads), kThreads, 0, stream>>>(out, n);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
