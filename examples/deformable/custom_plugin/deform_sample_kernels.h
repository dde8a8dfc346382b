// What deformable::deform_sample's kernels (deform_sample_kernels.cu, in the plugin's cubin bundle)
// and their host-side launch (deform_sample_launch.cpp) share: the kernels' symbol names, by which
// the plugin declares and fetches them, and the block size. No tensoracle header: the bundle's
// compile needs no include path.
#pragma once

namespace deformable {

// One kernel per (type of x, format of x); every kernel writes the columns in the type, LINEAR.
inline constexpr const char* kDeformSampleF32Linear = "deform_sample_f32_linear";
inline constexpr const char* kDeformSampleF16Linear = "deform_sample_f16_linear";
inline constexpr const char* kDeformSampleF16Hwc8 = "deform_sample_f16_hwc8";

inline constexpr int kDeformSampleThreads = 256, kDeformSampleMaxBlocks = 8192;  // grid-stride

}  // namespace deformable
