// How a strided copy (copy_strided.h) is simplified before launch, in host code so that it can be
// tested without a GPU. Every caller gets the same fast paths:
//   - dims of size 1 are dropped (a copy with a zero-size dim is empty);
//   - dims are ordered by output stride, largest first, so consecutive threads write
//     consecutive addresses;
//   - neighbouring dims that are contiguous on both sides are merged (a concat becomes a 2D copy,
//     a reshape-like transpose a 1D one);
//   - when the innermost dim is contiguous on both sides, elements are grouped into words of up
//     to 16 bytes (when sizes, strides, offsets and both base addresses allow it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/kernels/copy_strided.h"

namespace tensoracle::backends::cuda {

struct CopyPlan {
  StridedCopy copy;          // simplified geometry, in units of `word_size`
  size_t word_size = 0;      // bytes moved per kernel element: 1, 2, 4, 8 or 16
  int64_t count = 0;         // words to move (0: nothing to do)
  bool fits_int32 = false;   // indices and offsets stay far inside int32 (cheaper arithmetic)
  // The tiled kernel's two dims (indices into copy), or -1 when tiling does not apply:
  // `tile_out` is contiguous in the output (the innermost dim), `tile_in` contiguous in the input.
  int tile_out = -1;
  int tile_in = -1;
};

// `in` and `out` are the base addresses (only their alignment is used).
CopyPlan plan_strided_copy(const StridedCopy& copy, size_t element_size, const void* in, const void* out);

// Whether the tiled (shared-memory transpose) kernel applies: after simplification, the dim
// contiguous in the output and the dim contiguous in the input are different dims.
inline bool tiled_copy_applies(const CopyPlan& plan) { return plan.tile_out >= 0 && plan.tile_in >= 0; }

}  // namespace tensoracle::backends::cuda
