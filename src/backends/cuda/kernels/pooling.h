// The pooling kernel: max / average over 1-3 trailing dims with PyTorch's window rules
// (docs/ops.md "Pooling"), on any layout: every dim is addressed through element strides, so
// the same kernel pools linear [N, C, ...] and channels-last (nhwc) tensors.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct PoolingArgs {
  static constexpr int kMaxRank = 8;
  // The output dims in the order the kernel walks them (outermost first; the host orders them by
  // output stride so that neighbouring threads write neighbouring addresses).
  int rank = 0;
  int64_t extent[kMaxRank] = {};
  int64_t in_stride[kMaxRank] = {};   // input element stride of a dim that is not pooled
  int64_t out_stride[kMaxRank] = {};  // output element stride
  int pooled[kMaxRank] = {};          // which pooled dim (0..2) the dim is, or -1
  // The pooled dims, padded in front to 3 (an unused dim has size 1 and window 1).
  int64_t in[3] = {1, 1, 1};
  int64_t in_step[3] = {0, 0, 0};  // input element stride
  int64_t window[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t pre[3] = {0, 0, 0};
  int64_t post[3] = {0, 0, 0};
  bool is_max = true;
  bool count_include_pad = true;
  int64_t count = 0;  // output elements
};

enum class PoolingKernel {
  kThread,  // one thread per output: best for small windows. When the innermost walked dim is
            // unpooled channels, contiguous on both sides, and all strides, the channel count and
            // both base addresses are whole 16-byte vectors (nhwc with C % 8 == 0 for fp16/bf16,
            // C % 4 == 0 for fp32), one thread per 16-byte vector of channels instead.
  kWarp,    // one warp per output, lanes splitting the window: best for large (global) windows
};

// fp32 (accumulated in fp64, as the reference), fp16 and bf16 (in fp32).
cudaError_t launch_pooling(DataType type, const void* in, void* out, const PoolingArgs& args, PoolingKernel kernel,
                           cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
