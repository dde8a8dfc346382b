// The CUDA implementation of the format test plugins (format_plugins.h).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "format_plugins.h"

namespace tensoracle_test_plugins {

namespace {

__device__ float load(const FormatOperand& t, int64_t offset) {
  return t.half ? __half2float(static_cast<const __half*>(t.data)[offset]) : static_cast<const float*>(t.data)[offset];
}

__global__ void format_add_kernel(FormatOperand a, FormatOperand b, FormatOperand out, int64_t n, int64_t c, int64_t h,
                                  int64_t w, float scale) {
  const int64_t count = n * c * h * w;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t iw = i % w, ih = (i / w) % h, ic = (i / (w * h)) % c, in = i / (w * h * c);
    const auto at = [&](const FormatOperand& t) {
      return in * t.stride[0] + ic * t.stride[1] + ih * t.stride[2] + iw * t.stride[3];
    };
    float value = scale * load(a, at(a));
    if (b.data != nullptr) value += load(b, at(b));
    for (int64_t pad = c; ic == 0 && pad < a.padded_channels; ++pad)
      if (load(a, at(a) + pad) != 0.0f) value = NAN;
    if (out.half)
      static_cast<__half*>(out.data)[at(out)] = __float2half_rn(value);
    else
      static_cast<float*>(out.data)[at(out)] = value;
  }
}

}  // namespace

int launch_format_add(FormatOperand a, FormatOperand b, FormatOperand out, const int64_t shape[4], float scale,
                      void* stream) {
  const int64_t count = shape[0] * shape[1] * shape[2] * shape[3];
  if (count == 0) return 0;
  constexpr int kThreads = 256;
  const int64_t blocks = (count + kThreads - 1) / kThreads < 4096 ? (count + kThreads - 1) / kThreads : 4096;
  format_add_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      a, b, out, shape[0], shape[1], shape[2], shape[3], scale);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace tensoracle_test_plugins
