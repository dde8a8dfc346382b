// What every GPU test shares: the skip where no GPU is usable, a CUDA call that must succeed,
// and device memory (the backend's own DeviceBuffer, the one type for it).
//
//   TEST(Thing, RunsOnTheGpu) {
//     TO_SKIP_WITHOUT_GPU();
//     auto buffer = DeviceBuffer::allocate(host.byte_size(), "x");
//     ASSERT_TRUE(buffer.is_ok()) << buffer.status().to_string();
//     CUDA_OK(cudaMemcpy(buffer->data(), host.data(), host.byte_size(), cudaMemcpyHostToDevice));
//   }
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "backends/cuda/device.h"
#include "backends/cuda/plugin_kernels.h"

namespace tensoracle::testing {

using backends::cuda::DeviceBuffer;

// Skips the calling test (with the reason) where no CUDA GPU is usable.
#define TO_SKIP_WITHOUT_GPU()                                                                                \
  do {                                                                                                       \
    int count_ = 0;                                                                                          \
    const cudaError_t error_ = cudaGetDeviceCount(&count_);                                                  \
    if (error_ != cudaSuccess || count_ == 0)                                                                \
      GTEST_SKIP() << "no CUDA GPU: " << (error_ != cudaSuccess ? cudaGetErrorString(error_) : "0 devices"); \
  } while (0)

// A CUDA runtime call that must succeed (a fatal failure of the calling function otherwise).
#define CUDA_OK(call)                                                             \
  do {                                                                            \
    const cudaError_t error_ = (call);                                            \
    ASSERT_EQ(error_, cudaSuccess) << #call << ": " << cudaGetErrorString(error_); \
  } while (0)

// A plugin's kernels from its cubin bundle for the GPU in use, loaded as the cuda backend loads them.
inline Result<std::shared_ptr<PluginKernelSource>> plugin_kernels_on_this_gpu(const RegisteredPlugin& plugin) {
  int device = 0;
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    return Status(StatusCode::kInternal, std::string("cudaGetDevice: ") + cudaGetErrorString(e));
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, device); e != cudaSuccess)
    return Status(StatusCode::kInternal, std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e));
  return backends::cuda::load_plugin_kernels(plugin, device, prop.major * 10 + prop.minor);
}

}  // namespace tensoracle::testing
