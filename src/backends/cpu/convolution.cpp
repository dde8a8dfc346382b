// convolution (1D/2D/3D) by im2col + OpenBLAS dgemm per (image, group); deconvolution (2D) by
// dgemm + col2im. Spatial ranks below 3 are treated as 3D with leading size-1 dims.
#include <cblas.h>

#include <array>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

namespace {

// Geometry of one convolution, spatial dims padded to 3 (depth, height, width).
struct Geometry {
  int64_t n = 0, c = 0, k = 0, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// x: [N, C, in...]; y: [N, K, out...]; w: [*, *, kernel...]; `a`: the convolution's or the
// deconvolution's attributes.
template <typename Attributes>
Geometry geometry(const Attributes& a, const Dims& x, const Dims& y, const Dims& w) {
  Geometry g;
  const size_t s = x.rank() - 2, skip = 3 - s;
  g.n = x[0];
  g.c = x[1];
  g.k = y[1];
  g.groups = a.groups;
  const auto stride = a.strides(s), dilation = a.dilations(s), pad = a.pre_paddings(s);
  for (size_t i = 0; i < s; ++i) {
    g.in[skip + i] = x[2 + i];
    g.out[skip + i] = y[2 + i];
    g.kernel[skip + i] = w[2 + i];
    g.stride[skip + i] = stride[i];
    g.dilation[skip + i] = dilation[i];
    g.pad[skip + i] = pad[i];
  }
  return g;
}

// Rows (c, kd, kh, kw) x columns (od, oh, ow) of one image's channels [c0, c0 + channels).
void im2col(const Geometry& g, const double* image, int64_t channels, double* col) {
  const int64_t ks = g.kernel_size(), os = g.out_size();
  parallel_for(channels * ks, 64, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t c = row / ks;
      int64_t r = row % ks;
      const int64_t kw = r % g.kernel[2];
      r /= g.kernel[2];
      const int64_t kh = r % g.kernel[1], kd = r / g.kernel[1];
      const double* src = image + c * g.in_size();
      double* dst = col + row * os;
      for (int64_t od = 0; od < g.out[0]; ++od) {
        const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
          double* line = dst + (od * g.out[1] + oh) * g.out[2];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
            std::fill(line, line + g.out[2], 0.0);
            continue;
          }
          const double* in_line = src + (id * g.in[1] + ih) * g.in[2];
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
            line[ow] = (iw >= 0 && iw < g.in[2]) ? in_line[iw] : 0.0;
          }
        }
      }
    }
  });
}

bool is_pointwise(const Geometry& g) {
  for (int i = 0; i < 3; ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0) return false;
  return true;
}

void add_bias(const double* bias, int64_t n, int64_t channels, int64_t size, double* out) {
  if (!bias) return;
  parallel_for(n * channels, 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double* p = out + i * size;
      const double b = bias[i % channels];
      for (int64_t j = 0; j < size; ++j) p[j] += b;
    }
  });
}

}  // namespace

Status convolution_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const ConvolutionAttributes* a, k.attributes<ConvolutionAttributes>());
  const Geometry g = geometry(*a, k.in_shape(0), k.out_shape(0), k.in_shape(1));
  const int64_t cg = g.c / g.groups, kg = g.k / g.groups;
  const int64_t rows = cg * g.kernel_size(), os = g.out_size();
  const bool pointwise = is_pointwise(g);
  std::vector<double> col(pointwise ? 0 : static_cast<size_t>(rows * os));
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const double* image = k.in(0) + (n * g.c + grp * cg) * g.in_size();
      const double* cols = image;
      if (!pointwise) {
        im2col(g, image, cg, col.data());
        cols = col.data();
      }
      const double* w = k.in(1) + grp * kg * rows;
      double* out = k.out(0) + (n * g.k + grp * kg) * os;
      if (os == 0 || kg == 0) continue;
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(kg), static_cast<int>(os),
                  static_cast<int>(rows), 1.0, w, static_cast<int>(rows), cols, static_cast<int>(os), 0.0, out,
                  static_cast<int>(os));
    }
  }
  add_bias(k.has(2) ? k.in(2) : nullptr, g.n, g.k, os, k.out(0));
  return Status::ok();
}

Status deconvolution_kernel(const KernelContext& k) {
  // Roles swap: the output plays the convolution's input and vice versa.
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  TO_ASSIGN_OR_RETURN(const DeconvolutionAttributes* a, k.attributes<DeconvolutionAttributes>());
  Geometry g = geometry(*a, y, x, k.in_shape(1));
  g.n = x[0];
  g.c = y[1];  // output channels
  g.k = x[1];  // input channels
  const int64_t cg = g.c / g.groups, kg = g.k / g.groups;
  const int64_t rows = cg * g.kernel_size(), is = g.out_size(), os = g.in_size();
  std::vector<double> col(static_cast<size_t>(rows * is));
  std::fill(k.out(0), k.out(0) + count_of(y), 0.0);
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const double* in = k.in(0) + (n * g.k + grp * kg) * is;
      const double* w = k.in(1) + grp * kg * rows;  // [kg, rows]
      if (rows == 0 || is == 0) continue;
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(is),
                  static_cast<int>(kg), 1.0, w, static_cast<int>(rows), in, static_cast<int>(is), 0.0, col.data(),
                  static_cast<int>(is));
      double* out = k.out(0) + (n * g.c + grp * cg) * os;
      // col2im: each output channel is written by one thread.
      parallel_for(cg, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          for (int64_t r = 0; r < g.kernel_size(); ++r) {
            const int64_t kw = r % g.kernel[2], kh = (r / g.kernel[2]) % g.kernel[1];
            const double* src = col.data() + (c * g.kernel_size() + r) * is;
            double* dst = out + c * os;
            for (int64_t ih = 0; ih < g.out[1]; ++ih) {
              const int64_t oh = ih * g.stride[1] - g.pad[1] + kh * g.dilation[1];
              if (oh < 0 || oh >= g.in[1]) continue;
              for (int64_t iw = 0; iw < g.out[2]; ++iw) {
                const int64_t ow = iw * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                if (ow >= 0 && ow < g.in[2]) dst[oh * g.in[2] + ow] += src[ih * g.out[2] + iw];
              }
            }
          }
        }
      });
    }
  }
  add_bias(k.has(2) ? k.in(2) : nullptr, g.n, g.c, os, k.out(0));
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
