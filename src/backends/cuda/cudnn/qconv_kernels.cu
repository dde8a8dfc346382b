#include "backends/cuda/cudnn/qconv_kernels.h"
#include "backends/cuda/kernels/pointwise_device.cuh"

namespace tensoracle::backends::cuda {

namespace {

constexpr int kThreads = 256;

// One thread per packed byte, in the packed (storage) order. `Index` is uint32_t where the size
// allows: the 64-bit divisions that split a flat index cost more than the copy itself.
template <typename Index>
__global__ void pack_channels_last_kernel(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst,
                                          PackChannelsLastArgs a, int64_t total) {
  const Index C = static_cast<Index>(a.padded_c), B2 = static_cast<Index>(a.shape[3]), B1 = static_cast<Index>(a.shape[2]);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Index rest = static_cast<Index>(i);
    const Index c = rest % C;
    rest /= C;
    const Index b2 = rest % B2;
    rest /= B2;
    const Index b1 = rest % B1;
    const int64_t n = static_cast<int64_t>(rest / B1);
    dst[i] = n < a.shape[0] && c < a.shape[1]
                 ? src[n * a.stride[0] + static_cast<int64_t>(c) * a.stride[1] + static_cast<int64_t>(b1) * a.stride[2] +
                       static_cast<int64_t>(b2) * a.stride[3]]
                 : uint8_t{0};
  }
}

// The reference's formulas (cpu/unary.cpp, docs/ops.md) in fp64.
__device__ double apply_op(EpilogueOpKind kind, double v, double operand) {
  switch (kind) {
    case EpilogueOpKind::kAddTensor: return v + operand;
    case EpilogueOpKind::kMulTensor: return v * operand;
    case EpilogueOpKind::kRelu: return v < 0 ? 0.0 : v;  // NaN stays NaN
    case EpilogueOpKind::kSigmoid: return 1.0 / (1.0 + exp(-v));
    case EpilogueOpKind::kTanh: return tanh(v);
    case EpilogueOpKind::kGeluErf: return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
    case EpilogueOpKind::kGeluTanh: return 0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    case EpilogueOpKind::kSilu: return v / (1.0 + exp(-v));
  }
  return v;
}

__device__ __forceinline__ int64_t offset5(const int64_t stride[5], int64_t n, int64_t k, int64_t h, int64_t w) {
  return n * stride[0] + k * stride[1] + h * stride[3] + w * stride[4];
}

// Warp rows over pixels (n, h, w), lanes over channels k: a warp reads 32 adjacent channels of
// the NHWC accumulator (coalesced) and each thread finds its pixel's coordinates once for all the
// channels it visits -- the per-element 64-bit divisions of a flat index cost more than the
// convolution itself (docs/perf/gpu-log.md, 2026-12-06). The accumulator, product and output
// types are template arguments so that every load, rounding and store is one instruction path,
// not a switch per element; the arithmetic is that of qconv_kernels.h whatever they are.
constexpr int kEpilogueLanes = 32, kEpilogueRows = 8;

template <DataType kAcc, DataType kT, DataType kOut>
__global__ void quantized_conv_epilogue_kernel(const void* __restrict__ acc, void* __restrict__ y,
                                               QuantizedConvEpilogueArgs a) {
  constexpr bool kRequantize = kOut != kT;
  const int64_t K = a.shape[1], H = a.shape[2], W = a.shape[3];
  const int64_t pixels = a.shape[0] * H * W;
  const float* __restrict__ w_scale = static_cast<const float*>(a.w_scale);
  const double sx = static_cast<const float*>(a.x_scale)[0];
  const float sy = kRequantize ? static_cast<const float*>(a.y_scale)[0] : 1.0f;
  const EpilogueLaunch& e = a.epilogue;
  for (int64_t pixel = static_cast<int64_t>(blockIdx.x) * kEpilogueRows + threadIdx.y; pixel < pixels;
       pixel += static_cast<int64_t>(gridDim.x) * kEpilogueRows) {
    int64_t n, h, w;
    if (pixels <= UINT32_MAX) {  // 32-bit division is several times cheaper on the GPU
      const uint32_t p32 = static_cast<uint32_t>(pixel), w32 = static_cast<uint32_t>(W);
      const uint32_t hw = p32 / w32;
      w = p32 - hw * w32;
      h = hw % static_cast<uint32_t>(H);
      n = hw / static_cast<uint32_t>(H);
    } else {
      w = pixel % W;
      h = (pixel / W) % H;
      n = pixel / (W * H);
    }
    const int64_t acc_row = pixel * a.acc_channels;  // ((n * H + h) * W + w) * Kp
    const int64_t y_pixel = n * a.y_stride[0] + h * a.y_stride[2] + w * a.y_stride[3];
    for (int64_t k = threadIdx.x; k < K; k += kEpilogueLanes) {
      const double sw = w_scale[a.w_per_channel ? k : 0];
      double p = device::load<double>(acc, acc_row + k, kAcc) * sx * sw;
      if (e.bias.data) p += device::load<double>(e.bias.data, k, kT);
      p = device::round_to<double>(p, kT);
      for (int op = 0; op < e.count; ++op) {
        const ConvKernelTensor& operand = e.operand[op];
        const double v = operand.data ? device::load<double>(operand.data, offset5(operand.stride, n, k, h, w), kT) : 0.0;
        p = device::round_to<double>(apply_op(e.kind[op], p, v), kT);
      }
      const int64_t out = y_pixel + k * a.y_stride[1];
      if constexpr (kRequantize) device::store_quantized(y, out, kOut, static_cast<float>(p) / sy);
      else device::store<double>(y, out, kT, p);
    }
  }
}

template <DataType kAcc, DataType kT, DataType kOut>
cudaError_t launch_epilogue(const void* acc, void* y, const QuantizedConvEpilogueArgs& args, cudaStream_t stream) {
  const int64_t pixels = args.shape[0] * args.shape[2] * args.shape[3];
  quantized_conv_epilogue_kernel<kAcc, kT, kOut>
      <<<device::grid_for(pixels, kEpilogueRows), dim3(kEpilogueLanes, kEpilogueRows), 0, stream>>>(acc, y, args);
  return cudaGetLastError();
}

template <DataType kAcc, DataType kT>
cudaError_t launch_for_output(const void* acc, void* y, const QuantizedConvEpilogueArgs& args, cudaStream_t stream) {
  if (!args.y_scale) return launch_epilogue<kAcc, kT, kT>(acc, y, args, stream);
  if (args.y_scale_type != DataType::kFloat32) return cudaErrorInvalidValue;
  switch (args.output_type) {
    case DataType::kInt8: return launch_epilogue<kAcc, kT, DataType::kInt8>(acc, y, args, stream);
    case DataType::kFloat8E4M3: return launch_epilogue<kAcc, kT, DataType::kFloat8E4M3>(acc, y, args, stream);
    default: return cudaErrorInvalidValue;
  }
}

template <DataType kAcc>
cudaError_t launch_for_product(const void* acc, void* y, const QuantizedConvEpilogueArgs& args, cudaStream_t stream) {
  switch (args.product_type) {
    case DataType::kFloat32: return launch_for_output<kAcc, DataType::kFloat32>(acc, y, args, stream);
    case DataType::kFloat16: return launch_for_output<kAcc, DataType::kFloat16>(acc, y, args, stream);
    case DataType::kBFloat16: return launch_for_output<kAcc, DataType::kBFloat16>(acc, y, args, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t launch_pack_channels_last(const PackChannelsLastArgs& args, cudaStream_t stream) {
  if (args.padded_a < args.shape[0] || args.padded_c < args.shape[1]) return cudaErrorInvalidValue;
  const int64_t total = args.padded_a * args.shape[2] * args.shape[3] * args.padded_c;
  if (total == 0) return cudaSuccess;
  const auto* src = static_cast<const uint8_t*>(args.data);
  auto* dst = static_cast<uint8_t*>(args.packed);
  if (total <= static_cast<int64_t>(UINT32_MAX))
    pack_channels_last_kernel<uint32_t><<<device::grid_for(total, kThreads), kThreads, 0, stream>>>(src, dst, args, total);
  else
    pack_channels_last_kernel<uint64_t><<<device::grid_for(total, kThreads), kThreads, 0, stream>>>(src, dst, args, total);
  return cudaGetLastError();
}

cudaError_t launch_quantized_conv_epilogue(const void* acc, void* y, const QuantizedConvEpilogueArgs& args,
                                           cudaStream_t stream) {
  const int64_t count = args.shape[0] * args.shape[1] * args.shape[2] * args.shape[3];
  if (count == 0) return cudaSuccess;
  if (args.acc_channels < args.shape[1] || !args.x_scale || !args.w_scale || args.x_scale_type != DataType::kFloat32 ||
      args.w_scale_type != DataType::kFloat32)
    return cudaErrorInvalidValue;
  switch (args.acc_type) {
    case DataType::kInt32: return launch_for_product<DataType::kInt32>(acc, y, args, stream);
    case DataType::kFloat32: return launch_for_product<DataType::kFloat32>(acc, y, args, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tensoracle::backends::cuda
