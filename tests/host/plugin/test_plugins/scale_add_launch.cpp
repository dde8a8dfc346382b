// Launches test::scale_add's bundle kernel (scale_add_bundle_kernel.cu), fetched through
// Plugin::attach_kernels, with the CUDA runtime: the cubin-backed builds' enqueue.
#include <cuda_runtime_api.h>

#include "scale_add.h"

namespace tensoracle_test_plugins {

int launch_bundle_scale_add(void* kernel, const float* x, const float* b, float* y, int64_t count, float scale,
                            void* stream) {
  if (count == 0) return 0;
  constexpr unsigned kThreads = 256;
  const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  void* args[] = {&x, &b, &y, &count, &scale};
  return static_cast<int>(cudaLaunchKernel(static_cast<const void*>(kernel), dim3(blocks), dim3(kThreads), args, 0,
                                           static_cast<cudaStream_t>(stream)));
}

}  // namespace tensoracle_test_plugins
