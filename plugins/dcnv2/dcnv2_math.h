// What the CPU and CUDA implementations of tensoracle::dcnv2 share: the geometry of one
// configured layer, where element (n, c, h, w) of x lies in x's format, and the value of one
// element of the deformable column matrix. Both implementations run the same two steps with it:
//   1. columns[n][c*T + t][p] = mask * bilinear(x[n][c], position of tap t at output p + offset)
//      (T = kh*kw taps, p = oy*Wo + ox), stored in the I/O element type;
//   2. for each image n and group g, y[n][g] = W[g] · columns[n][g] + bias[g], accumulated in fp32.
// x is LINEAR (NCHW) or, in fp16, HWC8: [N, H, W, C8] with C8 = C rounded up to a multiple of 8,
// the padding channels never read (dcnv2_x_index). Every other tensor is LINEAR.
// Compiled by the host compiler and by nvcc (DCNV2_HOST_DEVICE).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define DCNV2_HOST_DEVICE __host__ __device__
#else
#define DCNV2_HOST_DEVICE
#endif

namespace tensoracle_plugins {

// x's memory format (int32_t: the geometry is a kernel argument, laid out alike on both sides).
enum class Dcnv2XLayout : int32_t { kLinear = 0, kHwc8 = 1 };

// Plain data (it is also a kernel argument): every size of one layer with concrete shapes.
struct Dcnv2Geometry {
  int32_t batch, channels, height, width;  // x [N, C, H, W]
  Dcnv2XLayout x_layout;                   // how x is stored (dcnv2_x_index)
  int32_t out_channels, kernel_h, kernel_w;  // weight [K, C/groups, kh, kw]
  int32_t out_height, out_width;             // y [N, K, Ho, Wo]
  int32_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int32_t groups, deformable_groups;

  DCNV2_HOST_DEVICE int64_t taps() const { return int64_t{kernel_h} * kernel_w; }
  DCNV2_HOST_DEVICE int64_t out_pixels() const { return int64_t{out_height} * out_width; }
  DCNV2_HOST_DEVICE int64_t column_rows() const { return int64_t{channels} * taps(); }  // per image
  DCNV2_HOST_DEVICE int64_t column_elements() const { return int64_t{batch} * column_rows() * out_pixels(); }
  // The GEMM of one (image, group): [M x Kd] · [Kd x P].
  DCNV2_HOST_DEVICE int64_t gemm_m() const { return out_channels / groups; }
  DCNV2_HOST_DEVICE int64_t gemm_k() const { return int64_t{channels / groups} * taps(); }
  // HWC8: the elements of one pixel, C rounded up to a multiple of 8.
  DCNV2_HOST_DEVICE int64_t x_padded_channels() const { return (int64_t{channels} + 7) / 8 * 8; }
};

// Where element (n, c, h, w) of x lies in x's layout: the one addressing of x that the CPU
// implementation and the CUDA im2col both read through.
DCNV2_HOST_DEVICE inline int64_t dcnv2_x_index(const Dcnv2Geometry& g, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (g.x_layout == Dcnv2XLayout::kHwc8) return ((n * g.height + h) * g.width + w) * g.x_padded_channels() + c;
  return ((n * g.channels + c) * g.height + h) * g.width + w;
}

// Bilinear sample of one [height, width] plane at (h, w) as torchvision's deform_conv2d samples:
// zero when h <= -1, h >= height, w <= -1 or w >= width; otherwise the four neighbours weighted
// bilinearly, each neighbour outside the plane counting as zero. `load(h, w)` reads the pixel
// (h, w) of the plane, inside it, as float.
template <typename Load>
DCNV2_HOST_DEVICE float dcnv2_bilinear(const Load& load, int32_t height, int32_t width, float h, float w) {
  if (h <= -1.0f || h >= static_cast<float>(height) || w <= -1.0f || w >= static_cast<float>(width)) return 0.0f;
  const float h_floor = h >= 0.0f ? static_cast<float>(static_cast<int32_t>(h)) : -1.0f;  // h > -1
  const float w_floor = w >= 0.0f ? static_cast<float>(static_cast<int32_t>(w)) : -1.0f;
  const int32_t h0 = static_cast<int32_t>(h_floor), w0 = static_cast<int32_t>(w_floor);
  const int32_t h1 = h0 + 1, w1 = w0 + 1;
  const float lh = h - h_floor, lw = w - w_floor;
  const float hh = 1.0f - lh, hw = 1.0f - lw;
  const bool top = h0 >= 0, bottom = h1 <= height - 1, left = w0 >= 0, right = w1 <= width - 1;
  const float v00 = top && left ? load(h0, w0) : 0.0f;
  const float v01 = top && right ? load(h0, w1) : 0.0f;
  const float v10 = bottom && left ? load(h1, w0) : 0.0f;
  const float v11 = bottom && right ? load(h1, w1) : 0.0f;
  return hh * hw * v00 + hh * lw * v01 + lh * hw * v10 + lh * lw * v11;
}

// One column element, columns[n][c*T + t][p] for the flat index `i` over [N][C][T][P] (the
// layout of the workspace). `load_x`, `load_offset`, `load_mask` read elements of x (at
// dcnv2_x_index), offset and mask (LINEAR) as float.
template <typename LoadX, typename LoadOffset, typename LoadMask>
DCNV2_HOST_DEVICE float dcnv2_column_value(const Dcnv2Geometry& g, int64_t i, const LoadX& load_x,
                                          const LoadOffset& load_offset, const LoadMask& load_mask) {
  const int64_t pixels = g.out_pixels();
  const int64_t p = i % pixels;
  const int64_t t = (i / pixels) % g.taps();
  const int64_t c = (i / (pixels * g.taps())) % g.channels;
  const int64_t n = i / (pixels * g.column_rows());
  const int32_t oy = static_cast<int32_t>(p / g.out_width), ox = static_cast<int32_t>(p % g.out_width);
  const int32_t ky = static_cast<int32_t>(t / g.kernel_w), kx = static_cast<int32_t>(t % g.kernel_w);
  // Offsets [N, dg*T*2, Ho, Wo]: for deformable group d and tap t, (dy, dx) at channels 2(dT+t), +1.
  const int64_t d = c / (g.channels / g.deformable_groups);
  const int64_t dt = d * g.taps() + t;
  const int64_t offset_y = ((n * g.deformable_groups * g.taps() + dt) * 2) * pixels + p;
  const float dy = load_offset(offset_y), dx = load_offset(offset_y + pixels);
  const float m = load_mask((n * g.deformable_groups * g.taps() + dt) * pixels + p);
  const float h = static_cast<float>(oy * g.stride_h - g.pad_h + ky * g.dilation_h) + dy;
  const float w = static_cast<float>(ox * g.stride_w - g.pad_w + kx * g.dilation_w) + dx;
  const auto load_pixel = [&](int32_t y, int32_t x) { return load_x(dcnv2_x_index(g, n, c, y, x)); };
  return m * dcnv2_bilinear(load_pixel, g.height, g.width, h, w);
}

}  // namespace tensoracle_plugins
