// test::scale_add's kernel as its cubin-backed builds ship it: compiled into the cubin bundle by
// tensoracle_add_cubin_plugin, not into the library, and fetched by this name at run time
// (extern "C": the symbol is "scale_add", not a mangled name).
#include <cstdint>

extern "C" __global__ void scale_add(const float* x, const float* b, float* y, int64_t count, float scale) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) y[i] = x[i] * scale + b[i];
}
