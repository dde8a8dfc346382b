// The in-place epilogue after an unfused cuDNN convolution: y = epilogue(y + bias).
#include <algorithm>
#include <array>
#include <cstdint>

#include "backends/cuda/cudnn/conv_device.cuh"

namespace tensoracle::backends::cuda {

namespace {

struct Shape5 {
  int64_t d[5];
};

// Threads take consecutive elements in y's storage order: the host hands the kernel y's dims
// (and every stride the epilogue reads with) permuted from the largest y stride to the smallest,
// so that a warp writes adjacent elements of a channels-last y, not 32 lines 2·C bytes apart.
// Offsets are dot products of an index with strides, so they do not care about the order.
// `Index` is uint32_t where the element count allows: 64-bit division is a long software
// sequence on the GPU, and five of them per element cost more than the memory traffic.
template <typename T, typename Index>
__global__ void conv_epilogue_kernel(T* y, Shape5 shape, Shape5 y_stride, EpilogueLaunch e, int64_t count) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t idx[5];
    conv_device::unravel<Index>(i, shape.d, idx);
    T& out = y[conv_device::offset(y_stride.d, idx)];
    out = conv_device::from_float<T>(conv_device::apply_epilogue<T>(conv_device::to_float(out), e, idx));
  }
}

template <typename T>
void launch(void* y, const Shape5& shape, const Shape5& y_stride, const EpilogueLaunch& e, int64_t count,
            cudaStream_t stream) {
  constexpr int kThreads = 256;
  const unsigned blocks = conv_device::grid_for(count, kThreads);
  if (count <= static_cast<int64_t>(UINT32_MAX))
    conv_epilogue_kernel<T, uint32_t><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(y), shape, y_stride, e, count);
  else
    conv_epilogue_kernel<T, uint64_t><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(y), shape, y_stride, e, count);
}

void permute(int64_t (&values)[5], const std::array<int, 5>& order) {
  int64_t copy[5];
  std::copy(values, values + 5, copy);
  for (int d = 0; d < 5; ++d) values[d] = copy[order[static_cast<size_t>(d)]];
}

}  // namespace

cudaError_t launch_conv_epilogue(ConvElement element, const int64_t shape[5], void* y, const int64_t y_stride[5],
                                 const EpilogueLaunch& epilogue, cudaStream_t stream) {
  int64_t count = 1;
  for (int d = 0; d < 5; ++d) count *= shape[d];
  if (count == 0 || (epilogue.bias.data == nullptr && epilogue.count == 0)) return cudaSuccess;
  // y's storage order: the dims by decreasing stride (ties, such as dims of extent 1, keep the
  // logical order).
  std::array<int, 5> order{0, 1, 2, 3, 4};
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return y_stride[a] > y_stride[b]; });
  Shape5 s, st;
  std::copy(shape, shape + 5, s.d);
  std::copy(y_stride, y_stride + 5, st.d);
  EpilogueLaunch e = epilogue;
  permute(s.d, order);
  permute(st.d, order);
  permute(e.bias.stride, order);
  for (int op = 0; op < e.count; ++op) permute(e.operand[op].stride, order);
  switch (element) {
    case ConvElement::kFloat32: launch<float>(y, s, st, e, count, stream); break;
    case ConvElement::kFloat16: launch<__half>(y, s, st, e, count, stream); break;
    case ConvElement::kBFloat16: launch<__nv_bfloat16>(y, s, st, e, count, stream); break;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
