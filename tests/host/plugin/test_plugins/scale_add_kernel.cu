// The CUDA implementation of test::scale_add (scale_add.h).
#include <cuda_runtime.h>

#include "scale_add.h"

namespace tensoracle_test_plugins {

namespace {
__global__ void scale_add_kernel(const float* x, const float* b, float* y, int64_t count, float scale) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) y[i] = x[i] * scale + b[i];
}
}  // namespace

int launch_scale_add(const float* x, const float* b, float* y, int64_t count, float scale, void* stream) {
  if (count == 0) return 0;
  constexpr int kThreads = 256;
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  scale_add_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(x, b, y, count, scale);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace tensoracle_test_plugins
