// test::scale_add: y = x * scale + b, elementwise over two fp32 inputs of one shape; `scale` is
// the plugin's parameter (4 bytes, a float). Its CPU implementation runs on the cpu backend; its
// CUDA one on the cuda backend: compiled into the library (scale_add_kernel.cu), or, in the
// cubin-backed builds, fetched from the bundle (scale_add_bundle_kernel.cu, scale_add_launch.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tensoracle_test_plugins {

// In CUDA builds: launches y = x * scale + b on `stream`; returns the cudaError_t as an int.
int launch_scale_add(const float* x, const float* b, float* y, int64_t count, float scale, void* stream);

// In CUDA builds: launches the bundle's scale_add `kernel` (a cudaKernel_t) the same way.
int launch_bundle_scale_add(void* kernel, const float* x, const float* b, float* y, int64_t count, float scale,
                            void* stream);

}  // namespace tensoracle_test_plugins
