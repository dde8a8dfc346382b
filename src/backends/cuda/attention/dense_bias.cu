// A grid-stride copy: each dense bias element finds its mask element through the broadcast
// geometry. The elements are moved as raw 16-bit words (no conversion).
#include <algorithm>

#include "backends/cuda/attention/dense_bias.h"
#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

__global__ void __launch_bounds__(kThreads) dense_bias_kernel(DenseBiasArgs a, int64_t total) {
  const uint16_t* mask = static_cast<const uint16_t*>(a.mask);
  uint16_t* bias = static_cast<uint16_t*>(a.bias);
  const int nb = a.mask_geometry.rank - 2;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int64_t j = idx % a.lk;
    int64_t t = idx / a.lk;
    const int64_t i = t % a.lq;
    t /= a.lq;
    const int64_t h = t % a.hm, b = t / a.hm;
    // bm or hm of 1: the mask does not vary along that dim, so index 0 reads the same values.
    int64_t batch = (a.bm == 1 ? 0 : b) * a.heads + (a.hm == 1 ? 0 : h);
    int64_t offset = i * a.mask_geometry.stride[nb] + j * a.mask_geometry.stride[nb + 1];
    for (int dim = nb - 1; dim >= 0; --dim) {
      offset += (batch % a.mask_geometry.shape[dim]) * a.mask_geometry.stride[dim];
      batch /= a.mask_geometry.shape[dim];
    }
    bias[idx] = mask[offset];
  }
}

}  // namespace

Status launch_dense_bias(const DenseBiasArgs& args, cudaStream_t stream) {
  const int64_t total = args.bm * args.hm * args.lq * args.lk;
  if (total == 0) return Status::ok();
  if (args.mask_geometry.rank < 2)
    return invalid_argument("dense bias: the mask geometry has rank {}, expected the scores' rank", args.mask_geometry.rank);
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks);
  dense_bias_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args, total);
  return last_launch_status("dense_bias_kernel");
}

}  // namespace tensoracle::backends::cuda
