// The CUDA implementation of tensoracle::dcnv2 (CUDA builds): the deformable im2col into the
// workspace, then the grouped GEMM with the bias fused. The kernels live in the library's cubin
// bundle (dcnv2_kernels.cu); the plugin fetches them in attach_kernels, and dcnv2_launch.cpp
// launches them with cudaLaunchKernel.
#pragma once

#include <string>

#include "dcnv2_math.h"
#include "dcnv2_parameters.h"

namespace tensoracle_plugins {

// The two kernels of one element type, as PluginKernelSource::kernel returned them (cudaKernel_t).
struct Dcnv2Kernels {
  void* im2col = nullptr;
  void* gemm = nullptr;
};

struct Dcnv2DeviceBuffers {
  const void* x;
  const void* offset;
  const void* mask;
  const void* weight;
  const void* bias;
  void* y;
  void* columns;  // the workspace: Dcnv2Geometry::column_elements() of the element type
};

// Enqueues both kernels on `stream` (a cudaStream_t); allocates and synchronizes nothing. Returns
// an empty string, or the failing CUDA call and its error.
std::string dcnv2_enqueue_cuda(const Dcnv2Kernels& kernels, Dcnv2Type type, const Dcnv2Geometry& geometry,
                               const Dcnv2DeviceBuffers& buffers, void* stream) noexcept;

}  // namespace tensoracle_plugins
