// One warp per score row: three passes over the row (max, sum of exponentials, write), lanes
// striding over the keys and the warp reducing with shuffles, so a row costs no shared memory
// and any lk works. Rows are walked with a grid-stride loop.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "backends/cuda/attention/masked_softmax.h"
#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kMaxBlocks = 65535;

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__half x) { return __half2float(x); }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename P> __device__ inline P from_float(float x);
template <> __device__ inline float from_float<float>(float x) { return x; }
template <> __device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__device__ inline float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}
__device__ inline float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// P is the type of the weights and of an additive mask.
template <typename P, MaskKind kMask>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) masked_softmax_kernel(MaskedSoftmaxArgs a) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  const int nb = a.mask_geometry.rank - 2;  // batch dims of the mask geometry
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32; r < a.rows; r += warps) {
    const int64_t global = a.first_row + r;
    const int64_t i = global % a.lq;
    const float* s = a.scores + r * a.lk;
    // The mask row of this (batch, query): walk the batch index through the broadcast strides.
    int64_t mask_offset = 0, mask_key_stride = 0;
    if (kMask != MaskKind::kNone) {
      int64_t b = global / a.lq;
      for (int dim = nb - 1; dim >= 0; --dim) {
        mask_offset += (b % a.mask_geometry.shape[dim]) * a.mask_geometry.stride[dim];
        b /= a.mask_geometry.shape[dim];
      }
      mask_offset += i * a.mask_geometry.stride[nb];
      mask_key_stride = a.mask_geometry.stride[nb + 1];
    }
    auto score = [&](int64_t j) {
      float x = s[j] * a.scale;
      if (kMask == MaskKind::kBool) {
        const unsigned char keep = static_cast<const unsigned char*>(a.mask)[mask_offset + j * mask_key_stride];
        if (!keep) x = -INFINITY;
      } else if (kMask == MaskKind::kAdditive) {
        x += to_float(static_cast<const P*>(a.mask)[mask_offset + j * mask_key_stride]);
      }
      if (a.causal && j > i) x = -INFINITY;
      return x;
    };
    // fmaxf ignores NaN scores like the reference's std::max; they still poison the sum.
    float max = -INFINITY;
    for (int64_t j = lane; j < a.lk; j += 32) max = fmaxf(max, score(j));
    max = warp_max(max);
    float sum = 0.0f;
    for (int64_t j = lane; j < a.lk; j += 32) sum += expf(score(j) - max);
    sum = warp_sum(sum);
    // In place when P is fp32: each lane reads its own element before writing it.
    P* p = static_cast<P*>(a.probs) + r * a.lk;
    for (int64_t j = lane; j < a.lk; j += 32) p[j] = from_float<P>(expf(score(j) - max) / sum);
  }
}

template <typename P>
Status launch_typed(const MaskedSoftmaxArgs& args, cudaStream_t stream) {
  const int64_t blocks = std::min<int64_t>((args.rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks);
  const dim3 grid(static_cast<unsigned>(blocks)), block(kWarpsPerBlock * 32);
  switch (args.mask_kind) {
    case MaskKind::kNone: masked_softmax_kernel<P, MaskKind::kNone><<<grid, block, 0, stream>>>(args); break;
    case MaskKind::kBool: masked_softmax_kernel<P, MaskKind::kBool><<<grid, block, 0, stream>>>(args); break;
    case MaskKind::kAdditive: masked_softmax_kernel<P, MaskKind::kAdditive><<<grid, block, 0, stream>>>(args); break;
  }
  return last_launch_status("masked_softmax_kernel");
}

}  // namespace

Status launch_masked_softmax(const MaskedSoftmaxArgs& args, cudaStream_t stream) {
  if (args.rows == 0 || args.lk == 0) return Status::ok();
  if (args.mask_kind != MaskKind::kNone && args.mask_geometry.rank < 2)
    return invalid_argument("masked softmax: the mask geometry has rank {}, expected the scores' rank", args.mask_geometry.rank);
  switch (args.probs_type) {
    case DataType::kFloat32: return launch_typed<float>(args, stream);
    case DataType::kFloat16: return launch_typed<__half>(args, stream);
    case DataType::kBFloat16: return launch_typed<__nv_bfloat16>(args, stream);
    default: return unsupported("masked softmax: weights of type {}", data_type_name(args.probs_type));
  }
}

}  // namespace tensoracle::backends::cuda
