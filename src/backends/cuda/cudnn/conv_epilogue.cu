// The in-place epilogue after an unfused cuDNN convolution: y = epilogue(y + bias).
#include "backends/cuda/cudnn/conv_device.cuh"

namespace tensoracle::backends::cuda {

namespace {

struct Shape5 {
  int64_t d[5];
};

template <typename T>
__global__ void conv_epilogue_kernel(T* y, Shape5 shape, Shape5 y_stride, EpilogueLaunch e, int64_t count) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t idx[5];
    conv_device::unravel(i, shape.d, idx);
    T& out = y[conv_device::offset(y_stride.d, idx)];
    out = conv_device::from_float<T>(conv_device::apply_epilogue<T>(conv_device::to_float(out), e, idx));
  }
}

}  // namespace

cudaError_t launch_conv_epilogue(ConvElement element, const int64_t shape[5], void* y, const int64_t y_stride[5],
                                 const EpilogueLaunch& epilogue, cudaStream_t stream) {
  Shape5 s, st;
  int64_t count = 1;
  for (int d = 0; d < 5; ++d) {
    s.d[d] = shape[d];
    st.d[d] = y_stride[d];
    count *= shape[d];
  }
  if (count == 0 || (epilogue.bias.data == nullptr && epilogue.count == 0)) return cudaSuccess;
  constexpr int kThreads = 256;
  const unsigned blocks = conv_device::grid_for(count, kThreads);
  switch (element) {
    case ConvElement::kFloat32:
      conv_epilogue_kernel<float><<<blocks, kThreads, 0, stream>>>(static_cast<float*>(y), s, st, epilogue, count);
      break;
    case ConvElement::kFloat16:
      conv_epilogue_kernel<__half><<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(y), s, st, epilogue, count);
      break;
    case ConvElement::kBFloat16:
      conv_epilogue_kernel<__nv_bfloat16>
          <<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(y), s, st, epilogue, count);
      break;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
