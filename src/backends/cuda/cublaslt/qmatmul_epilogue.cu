#include "backends/cuda/cublaslt/qmatmul_epilogue.h"

#include <algorithm>

#include "backends/cuda/kernels/pointwise_device.cuh"

namespace tensoracle::backends::cuda {

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // the reference's gelu_tanh constants (cpu/unary.cpp)

// One thread per column n (its weight scale and bias read once), looping over rows; the
// accumulator and product types are template arguments, so loads and roundings compile to their
// one case (no per-element type switch, no index division).
template <DataType kAcc, DataType kProduct>
__global__ void quantized_epilogue_kernel(const void* __restrict__ acc, void* __restrict__ y, QuantizedEpilogueArgs a) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= a.cols) return;
  constexpr DataType t = kProduct;
  const double sa = device::load<double>(a.a_scale, 0, a.a_scale_type);
  const double sb = device::load<double>(a.b_scale, a.b_per_channel ? n : 0, a.b_scale_type);
  const double bias = a.bias ? device::load<double>(a.bias, n, t) : 0.0;
  const float sy = a.y_scale ? device::load<float>(a.y_scale, 0, a.y_scale_type) : 1.0f;
  for (int64_t m = blockIdx.y; m < a.rows; m += gridDim.y) {
    const int64_t i = m * a.cols + n;
    double p = device::round_to<double>(device::load<double>(acc, i, kAcc) * sa * sb, t);
    if (a.bias) p = device::round_to<double>(p + bias, t);
    if (a.residual) p = device::round_to<double>(p + device::load<double>(a.residual, i, t), t);
    if (a.activation == 1) p = device::round_to<double>(p < 0 ? 0.0 : p, t);
    if (a.activation == 2) p = device::round_to<double>(0.5 * p * (1.0 + tanh(kSqrt2OverPi * (p + 0.044715 * p * p * p))), t);
    if (a.y_scale) device::store_quantized(y, i, a.output_type, static_cast<float>(p) / sy);
    else device::store<double>(y, i, t, p);
  }
}

template <DataType kAcc>
cudaError_t launch_for_product(const void* acc, void* y, const QuantizedEpilogueArgs& args, dim3 grid, dim3 block,
                               cudaStream_t stream) {
  switch (args.product_type) {
    case DataType::kFloat32: quantized_epilogue_kernel<kAcc, DataType::kFloat32><<<grid, block, 0, stream>>>(acc, y, args); break;
    case DataType::kFloat16: quantized_epilogue_kernel<kAcc, DataType::kFloat16><<<grid, block, 0, stream>>>(acc, y, args); break;
    case DataType::kBFloat16: quantized_epilogue_kernel<kAcc, DataType::kBFloat16><<<grid, block, 0, stream>>>(acc, y, args); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

__global__ void fp8_gemm_scales_kernel(const void* a, DataType a_type, const void* b, DataType b_type, const void* y,
                                       DataType y_type, float* out) {
  out[0] = a ? device::load<float>(a, 0, a_type) : 1.0f;
  out[kFp8ScaleSpacing] = b ? device::load<float>(b, 0, b_type) : 1.0f;
  out[2 * kFp8ScaleSpacing] = y ? 1.0f / device::load<float>(y, 0, y_type) : 1.0f;
}

__global__ void fp8_row_scales_kernel(const float* a_scale, int64_t rows, const void* y, DataType y_type,
                                      float* row_scales, float* d_scale) {
  const float sa = *a_scale;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    row_scales[i] = sa;
  if (blockIdx.x == 0 && threadIdx.x == 0) *d_scale = y ? 1.0f / device::load<float>(y, 0, y_type) : 1.0f;
}

}  // namespace

cudaError_t launch_quantized_epilogue(const void* acc, void* y, const QuantizedEpilogueArgs& args, cudaStream_t stream) {
  const int64_t count = args.rows * args.cols;
  if (count == 0) return cudaSuccess;
  if (args.cols <= 0 || !args.a_scale || !args.b_scale) return cudaErrorInvalidValue;
  // Columns across x; rows across y, as many as keep a few thousand blocks in flight.
  constexpr int kThreads = 128;
  const int64_t column_blocks = (args.cols + kThreads - 1) / kThreads;
  if (column_blocks > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const int64_t row_blocks = std::min<int64_t>({args.rows, std::max<int64_t>(1, 4096 / column_blocks), 65535});
  const dim3 grid(static_cast<unsigned>(column_blocks), static_cast<unsigned>(row_blocks));
  switch (args.acc_type) {
    case DataType::kInt32: return launch_for_product<DataType::kInt32>(acc, y, args, grid, kThreads, stream);
    case DataType::kFloat32: return launch_for_product<DataType::kFloat32>(acc, y, args, grid, kThreads, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_fp8_gemm_scales(const void* a_scale, DataType a_type, const void* b_scale, DataType b_type,
                                   const void* y_scale, DataType y_type, float* out, cudaStream_t stream) {
  fp8_gemm_scales_kernel<<<1, 1, 0, stream>>>(a_scale, a_type, b_scale, b_type, y_scale, y_type, out);
  return cudaGetLastError();
}

cudaError_t launch_fp8_row_scales(const float* a_scale, int64_t rows, const void* y_scale, DataType y_type,
                                  float* row_scales, float* d_scale, cudaStream_t stream) {
  if (rows <= 0 || !a_scale) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  fp8_row_scales_kernel<<<device::grid_for(rows, kThreads), kThreads, 0, stream>>>(a_scale, rows, y_scale, y_type,
                                                                                    row_scales, d_scale);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
