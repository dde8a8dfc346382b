#include <cuda_runtime_api.h>

#include "deform_sample_cuda.h"
#include "deform_sample_kernels.h"

namespace deformable {

std::string deform_sample_enqueue_cuda(void* kernel, const char* name, bool hwc8, const DeformSampleGeometry& geometry,
                                       const void* x, const void* offset_mask, void* columns, void* stream) noexcept {
  if (kernel == nullptr) return std::string("the kernel ") + name + " was not fetched from the bundle (attach_kernels)";
  const int64_t threads = hwc8 ? int64_t{geometry.batch} * (geometry.channel_stride / 8) * kDeformSampleTaps * geometry.pixels()
                               : geometry.column_elements();
  if (threads == 0) return {};
  const int64_t blocks = (threads + kDeformSampleThreads - 1) / kDeformSampleThreads;
  DeformSampleGeometry g = geometry;
  void* args[] = {&g, &x, &offset_mask, &columns};
  const cudaError_t error =
      cudaLaunchKernel(static_cast<const void*>(kernel), dim3(static_cast<unsigned>(blocks < kDeformSampleMaxBlocks ? blocks : kDeformSampleMaxBlocks)),
                       dim3(kDeformSampleThreads), args, 0, static_cast<cudaStream_t>(stream));
  if (error != cudaSuccess)
    return std::string("cudaLaunchKernel(") + name + "): " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  return {};
}

}  // namespace deformable
