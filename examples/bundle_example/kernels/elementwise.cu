// One-input elementwise kernel: y = x * scale + bias, in fp32.
//
// extern "C" keeps the symbol name readable ("scale_bias"), which is the name a plugin declaration
// lists and the runtime fetches from the cubin. A C++ kernel would appear under its mangled name.
#include <cstdint>

extern "C" __global__ void scale_bias(const float* __restrict__ x, float* __restrict__ y, float scale, float bias,
                                      int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = x[i] * scale + bias;
  }
}
