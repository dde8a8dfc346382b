// sdk::affine's kernel: y = a * x + b over `count` fp32 elements. extern "C" keeps the symbol name
// the plugin declares (docs/bundles.md, "Kernel names").
extern "C" __global__ void sdk_affine(const float* x, float* y, long long count, float a, float b) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) y[i] = a * x[i] + b;
}
