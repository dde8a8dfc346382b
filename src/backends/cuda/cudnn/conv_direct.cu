// Direct (transposed) convolution: one thread per output element, fp32 accumulation over the
// input channels of its group and the kernel taps, then bias and the epilogue. Simple and
// general (1-3 spatial dims, groups, dilation, any strides); the cuDNN tactics are the fast path.
#include "backends/cuda/cudnn/conv_device.cuh"

namespace tensoracle::backends::cuda {

namespace {

template <typename T>
__global__ void direct_conv_kernel(DirectConvLaunch a, int64_t count) {
  const T* x = static_cast<const T*>(a.x.data);
  const T* w = static_cast<const T*>(a.w.data);
  T* y = static_cast<T*>(a.y);
  const int64_t shape[5] = {a.n, a.k, a.out[0], a.out[1], a.out[2]};
  const int64_t cg = a.c / a.groups, kg = a.k / a.groups;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t idx[5];
    conv_device::unravel(i, shape, idx);
    const int64_t k = idx[1], g = k / kg;
    float acc = 0.0f;
    for (int64_t cc = 0; cc < cg; ++cc) {
      const int64_t c = g * cg + cc;
      // conv: w[k, cc, t]; transposed: w[c, k - g*kg, t]
      const T* wt = a.transposed ? w + c * a.w.stride[0] + (k - g * kg) * a.w.stride[1]
                                 : w + k * a.w.stride[0] + cc * a.w.stride[1];
      const T* xc = x + idx[0] * a.x.stride[0] + c * a.x.stride[1];
      for (int64_t td = 0; td < a.kernel[0]; ++td) {
        int64_t id;
        if (!a.transposed) {
          id = idx[2] * a.stride[0] - a.pre[0] + td * a.dilation[0];
        } else {
          const int64_t num = idx[2] + a.pre[0] - td * a.dilation[0];
          if (num < 0 || num % a.stride[0] != 0) continue;
          id = num / a.stride[0];
        }
        if (id < 0 || id >= a.in[0]) continue;
        for (int64_t th = 0; th < a.kernel[1]; ++th) {
          int64_t ih;
          if (!a.transposed) {
            ih = idx[3] * a.stride[1] - a.pre[1] + th * a.dilation[1];
          } else {
            const int64_t num = idx[3] + a.pre[1] - th * a.dilation[1];
            if (num < 0 || num % a.stride[1] != 0) continue;
            ih = num / a.stride[1];
          }
          if (ih < 0 || ih >= a.in[1]) continue;
          for (int64_t tw = 0; tw < a.kernel[2]; ++tw) {
            int64_t iw;
            if (!a.transposed) {
              iw = idx[4] * a.stride[2] - a.pre[2] + tw * a.dilation[2];
            } else {
              const int64_t num = idx[4] + a.pre[2] - tw * a.dilation[2];
              if (num < 0 || num % a.stride[2] != 0) continue;
              iw = num / a.stride[2];
            }
            if (iw < 0 || iw >= a.in[2]) continue;
            const float xv = conv_device::to_float(xc[id * a.x.stride[2] + ih * a.x.stride[3] + iw * a.x.stride[4]]);
            const float wv = conv_device::to_float(wt[td * a.w.stride[2] + th * a.w.stride[3] + tw * a.w.stride[4]]);
            acc += xv * wv;
          }
        }
      }
    }
    y[conv_device::offset(a.y_stride, idx)] = conv_device::from_float<T>(conv_device::apply_epilogue<T>(acc, a.epilogue, idx));
  }
}

}  // namespace

cudaError_t launch_direct_conv(const DirectConvLaunch& args, cudaStream_t stream) {
  const int64_t count = args.n * args.k * args.out[0] * args.out[1] * args.out[2];
  if (count == 0) return cudaSuccess;
  if (args.groups < 1 || args.c % args.groups != 0 || args.k % args.groups != 0) return cudaErrorInvalidValue;
  constexpr int kThreads = 128;
  const unsigned blocks = conv_device::grid_for(count, kThreads);
  switch (args.element) {
    case ConvElement::kFloat32: direct_conv_kernel<float><<<blocks, kThreads, 0, stream>>>(args, count); break;
    case ConvElement::kFloat16: direct_conv_kernel<__half><<<blocks, kThreads, 0, stream>>>(args, count); break;
    case ConvElement::kBFloat16: direct_conv_kernel<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(args, count); break;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
