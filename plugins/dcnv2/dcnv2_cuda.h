// The CUDA implementation of tensoracle::dcnv2 (dcnv2_kernels.cu, compiled into the plugin
// library in CUDA builds): the deformable im2col into the workspace, then the grouped GEMM with
// the bias fused. Kernels are extern "C" and launched by name through one function (the launch
// table in dcnv2_kernels.cu), so that moving them into a cubin bundle fetched by name at run time
// changes that table only.
#pragma once

#include <string>

#include "dcnv2_math.h"
#include "dcnv2_parameters.h"

namespace tensoracle_plugins {

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
std::string dcnv2_enqueue_cuda(Dcnv2Type type, const Dcnv2Geometry& geometry, const Dcnv2DeviceBuffers& buffers,
                               void* stream) noexcept;

}  // namespace tensoracle_plugins
