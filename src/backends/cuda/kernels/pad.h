// The pad kernel: every output element reads its source element or the constant (docs/ops.md
// "Pad"). Moves raw elements, so any data type of 1, 2, 4 or 8 bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tensoracle::backends::cuda {

enum class PadFill : int { kConstant, kReflect, kReplicate, kCircular };  // PadMode's order

struct PadArgs {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t out_shape[kMaxRank] = {};
  int64_t in_shape[kMaxRank] = {};
  int64_t in_stride[kMaxRank] = {};  // elements
  int64_t pre[kMaxRank] = {};        // per dim (0 for unpadded dims)
  PadFill fill = PadFill::kConstant;
  uint64_t value_bits = 0;  // the constant, encoded in the element type (low bytes)
  int64_t count = 0;        // output elements
};

// Launch status of the kernel (cudaSuccess without launching when count is 0).
cudaError_t launch_pad(const void* in, void* out, size_t element_size, const PadArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
