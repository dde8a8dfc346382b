// deformable::deform_sample's kernels, compiled into the plugin's cubin bundle
// (deform_sample_plugin_bundle/, sm_80 and sm_90) by tensoracle_add_cubin_plugin, not into the
// library; the plugin fetches them by these extern "C" names (attach_kernels). What they compute:
// deform_sample_math.h. Every kernel writes the columns LINEAR, in x's type; the mask's sigmoid and
// the bilinear weights are computed in fp32, and fp32 is plain FMA/ALU work (no tensor cores, so
// nothing rounds through TF32: `bundle inspect --check-no-tf32`).
//   deform_sample_f32_linear, deform_sample_f16_linear  one thread per column element, grid-stride
//   deform_sample_f16_hwc8  one thread per (image, 8-channel group, tap, pixel): the sample point
//                           once, then each neighbour's 8 channels in one 16-byte load (HWC8's
//                           point: the channels of a pixel are contiguous and 16-byte aligned)
#include <cuda_fp16.h>

#include "deform_sample_kernels.h"
#include "deform_sample_math.h"

namespace deformable {
namespace {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }

template <typename T>
__device__ void sample_linear(const DeformSampleGeometry& g, const T* x, const T* offset_mask, T* columns) {
  const int64_t total = g.column_elements(), pixels = g.pixels();
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  const auto load_om = [&](int64_t i) { return to_float(offset_mask[i]); };
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t p = i % pixels, t = (i / pixels) % kDeformSampleTaps;
    const int64_t c = (i / (pixels * kDeformSampleTaps)) % g.channels;
    const int64_t n = i / (pixels * kDeformSampleTaps * g.channels);
    const DeformSamplePoint s = deform_sample_point(g, n, t, p, load_om);
    const DeformSampleCorners k = deform_sample_corners(g.height, g.width, s.h, s.w);
    const T* plane = x + (n * g.channels + c) * pixels;
    const float v = deform_sample_value(k, [&](int32_t h, int32_t w) { return to_float(plane[int64_t{h} * g.width + w]); });
    store(columns + i, s.mask * v);
  }
}

__device__ void sample_hwc8(const DeformSampleGeometry& g, const __half* x, const __half* offset_mask, __half* columns) {
  const int64_t pixels = g.pixels(), groups = g.channel_stride / 8;
  const int64_t total = int64_t{g.batch} * groups * kDeformSampleTaps * pixels;
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  const auto load_om = [&](int64_t i) { return __half2float(offset_mask[i]); };
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t p = i % pixels, t = (i / pixels) % kDeformSampleTaps;
    const int64_t c8 = (i / (pixels * kDeformSampleTaps)) % groups;
    const int64_t n = i / (pixels * kDeformSampleTaps * groups);
    const DeformSamplePoint s = deform_sample_point(g, n, t, p, load_om);
    const DeformSampleCorners k = deform_sample_corners(g.height, g.width, s.h, s.w);
    float v[8] = {};
    const int32_t corner_h[4] = {k.h0, k.h0, k.h0 + 1, k.h0 + 1}, corner_w[4] = {k.w0, k.w0 + 1, k.w0, k.w0 + 1};
    // The same sum as deform_sample_value, in the same order, 8 channels at a time.
#pragma unroll
    for (int corner = 0; corner < 4; ++corner) {
      float neighbour[8] = {};
      if (k.inside[corner]) {
        const int64_t pixel = (n * g.height + corner_h[corner]) * g.width + corner_w[corner];
        const uint4 raw = *reinterpret_cast<const uint4*>(x + pixel * g.channel_stride + c8 * 8);
        const __half2* h2 = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const float2 f = __half22float2(h2[j]);
          neighbour[2 * j] = f.x, neighbour[2 * j + 1] = f.y;
        }
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = corner == 0 ? k.weight[0] * neighbour[j] : v[j] + k.weight[corner] * neighbour[j];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int64_t c = c8 * 8 + j;
      if (c < g.channels) store(columns + ((n * g.channels + c) * kDeformSampleTaps + t) * pixels + p, s.mask * v[j]);
    }
  }
}

}  // namespace
}  // namespace deformable

using deformable::DeformSampleGeometry;

extern "C" __global__ void __launch_bounds__(deformable::kDeformSampleThreads)
    deform_sample_f32_linear(DeformSampleGeometry g, const float* x, const float* offset_mask, float* columns) {
  deformable::sample_linear(g, x, offset_mask, columns);
}
extern "C" __global__ void __launch_bounds__(deformable::kDeformSampleThreads)
    deform_sample_f16_linear(DeformSampleGeometry g, const __half* x, const __half* offset_mask, __half* columns) {
  deformable::sample_linear(g, x, offset_mask, columns);
}
extern "C" __global__ void __launch_bounds__(deformable::kDeformSampleThreads)
    deform_sample_f16_hwc8(DeformSampleGeometry g, const __half* x, const __half* offset_mask, __half* columns) {
  deformable::sample_hwc8(g, x, offset_mask, columns);
}
