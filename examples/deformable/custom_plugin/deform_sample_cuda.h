// The CUDA half of deformable::deform_sample (CUDA builds): launches one of its bundle kernels
// (deform_sample_kernels.cu), fetched through Plugin::attach_kernels, with cudaLaunchKernel.
#pragma once

#include <string>

#include "deform_sample_math.h"

namespace deformable {

// Enqueues `kernel` (a cudaKernel_t; `name` for errors) over the layer on `stream`. `hwc8`: the
// kernel takes one thread per 8-channel group. Allocates and synchronizes nothing; returns an
// empty string or the CUDA error.
std::string deform_sample_enqueue_cuda(void* kernel, const char* name, bool hwc8, const DeformSampleGeometry& geometry,
                                       const void* x, const void* offset_mask, void* columns, void* stream) noexcept;

}  // namespace deformable
