// Strided copies, the kernel behind transpose, slice, concat and layout reformats:
//
//   out[out_offset + sum_d c[d] * out_stride[d]] = in[in_offset + sum_d c[d] * in_stride[d]]
//
// for every coordinate c of `shape` (element strides; input strides may be negative). Elements
// are moved as raw bytes, so every data type of a given size shares one kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tensoracle::backends::cuda {

struct StridedCopy {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t in_stride[kMaxRank] = {};
  int64_t out_stride[kMaxRank] = {};
  int64_t in_offset = 0;
  int64_t out_offset = 0;
};

enum class CopyKernel {
  kAuto,     // tiled when it applies and both tile dims are large enough, else strided
  kTiled,    // 32x32 tiles through shared memory: both reads and writes coalesced (transposes)
  kStrided,  // one thread per element, walking the output in memory order
};
// kAuto and kStrided move copies whose simplified plan has 16-byte words (copy_plan.h:
// chunk_copy_applies) with a 16-byte chunk kernel: several uint4 chunks per thread, 32-bit indices.

// Copies `copy` (elements of `element_size` bytes: 1, 2, 4 or 8) from `in` to `out` on `stream`.
// kTiled on a copy where it does not apply (copy_plan.h: tiled_copy_applies) falls back to kStrided.
// Returns the launch status (cudaGetLastError) of the kernel, or cudaSuccess for an empty copy.
cudaError_t launch_strided_copy(const void* in, void* out, size_t element_size, const StridedCopy& copy,
                                CopyKernel kernel, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
