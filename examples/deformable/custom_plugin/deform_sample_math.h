// What the CPU and CUDA implementations of deformable::deform_sample share (compiled by the host
// compiler and by nvcc): the geometry, where a kernel tap of an output pixel samples (from the
// combined offset+mask tensor) and torchvision's bilinear rule. The layer is a 3x3 deformable
// sampling with stride 1, padding 1 and dilation 1, so the output is H x W.
//
//   x            [N, C, H, W]   LINEAR, or HWC8: element (n, c, h, w) at ((n*H + h)*W + w)*Cp + c,
//                               Cp = C rounded up to a multiple of 8 (the padding is never read)
//   offset_mask  [N, 27, H, W]  channels 2t, 2t+1: (dy, dx) of tap t = 3*ky + kx (torchvision's
//                               offset order); channels 18 + t: the mask logit of tap t
//   columns      [N, C*9, H*W]  columns[n][c*9 + t][p] = sigmoid(logit) * bilinear(x[n][c], tap t of p)
// The column order (channel-major, then tap) is the order of a [K, C, 3, 3] weight's rows, so
// weight.reshape(K, C*9) · columns is the deformable convolution.
#pragma once

#include <math.h>

#include <cstdint>

#ifdef __CUDACC__
#define DEFORM_SAMPLE_HOST_DEVICE __host__ __device__
#else
#define DEFORM_SAMPLE_HOST_DEVICE
#endif

namespace deformable {

inline constexpr int kDeformSampleTaps = 9;
inline constexpr int kOffsetMaskChannels = 3 * kDeformSampleTaps;  // 18 offsets, 9 mask logits

// Plain data (a kernel argument): the sizes of one configured layer.
struct DeformSampleGeometry {
  int32_t batch, channels, height, width;
  int32_t channel_stride;  // of x's pixels in HWC8 (C rounded up to 8); C for LINEAR

  DEFORM_SAMPLE_HOST_DEVICE int64_t pixels() const { return int64_t{height} * width; }
  DEFORM_SAMPLE_HOST_DEVICE int64_t column_elements() const {
    return int64_t{batch} * channels * kDeformSampleTaps * pixels();
  }
};

// Where tap t of output pixel p of image n samples, and its mask.
struct DeformSamplePoint {
  float h, w, mask;
};

// `load(i)` reads element i of offset_mask as float.
template <typename Load>
DEFORM_SAMPLE_HOST_DEVICE DeformSamplePoint deform_sample_point(const DeformSampleGeometry& g, int64_t n, int64_t t,
                                                               int64_t p, const Load& load) {
  const int64_t pixels = g.pixels();
  const int64_t base = n * kOffsetMaskChannels * pixels + p;
  const float dy = load(base + 2 * t * pixels), dx = load(base + (2 * t + 1) * pixels);
  const float logit = load(base + (2 * kDeformSampleTaps + t) * pixels);
  const int32_t oy = static_cast<int32_t>(p / g.width), ox = static_cast<int32_t>(p % g.width);
  const int32_t ky = static_cast<int32_t>(t / 3), kx = static_cast<int32_t>(t % 3);
  return {static_cast<float>(oy - 1 + ky) + dy, static_cast<float>(ox - 1 + kx) + dx, 1.0f / (1.0f + expf(-logit))};
}

// The four neighbours of a sample and their bilinear weights, as torchvision's deform_conv2d
// takes them: nothing when h <= -1, h >= H, w <= -1 or w >= W; otherwise each neighbour inside
// the image, weighted bilinearly (one outside counts as zero).
struct DeformSampleCorners {
  int32_t h0, w0;   // the top-left neighbour; the others are (h0, w0+1), (h0+1, w0), (h0+1, w0+1)
  float weight[4];  // hh*hw, hh*lw, lh*hw, lh*lw
  bool inside[4];
};

DEFORM_SAMPLE_HOST_DEVICE inline DeformSampleCorners deform_sample_corners(int32_t height, int32_t width, float h,
                                                                          float w) {
  DeformSampleCorners k{0, 0, {0.0f, 0.0f, 0.0f, 0.0f}, {false, false, false, false}};
  if (h <= -1.0f || h >= static_cast<float>(height) || w <= -1.0f || w >= static_cast<float>(width)) return k;
  const float h_floor = h >= 0.0f ? static_cast<float>(static_cast<int32_t>(h)) : -1.0f;  // h > -1
  const float w_floor = w >= 0.0f ? static_cast<float>(static_cast<int32_t>(w)) : -1.0f;
  k.h0 = static_cast<int32_t>(h_floor), k.w0 = static_cast<int32_t>(w_floor);
  const float lh = h - h_floor, lw = w - w_floor, hh = 1.0f - lh, hw = 1.0f - lw;
  const bool top = k.h0 >= 0, bottom = k.h0 + 1 <= height - 1, left = k.w0 >= 0, right = k.w0 + 1 <= width - 1;
  k.weight[0] = hh * hw, k.weight[1] = hh * lw, k.weight[2] = lh * hw, k.weight[3] = lh * lw;
  k.inside[0] = top && left, k.inside[1] = top && right, k.inside[2] = bottom && left, k.inside[3] = bottom && right;
  return k;
}

// The bilinear sample of one channel: `load(h, w)` reads x at a pixel inside the image as float.
// Summed in torchvision's order, a neighbour outside the image reading 0.
template <typename Load>
DEFORM_SAMPLE_HOST_DEVICE float deform_sample_value(const DeformSampleCorners& k, const Load& load) {
  const float v00 = k.inside[0] ? load(k.h0, k.w0) : 0.0f;
  const float v01 = k.inside[1] ? load(k.h0, k.w0 + 1) : 0.0f;
  const float v10 = k.inside[2] ? load(k.h0 + 1, k.w0) : 0.0f;
  const float v11 = k.inside[3] ? load(k.h0 + 1, k.w0 + 1) : 0.0f;
  return k.weight[0] * v00 + k.weight[1] * v01 + k.weight[2] * v10 + k.weight[3] * v11;
}

}  // namespace deformable
