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

// Unsigned division by a divisor fixed at launch, as a multiply-high, an add and a shift (the
// round-up reciprocal method): exact for every dividend and divisor in [1, 2^31) (dividend 0 too).
// The 32-bit chunk copy uses it for its index math: the GPU has no integer divide instruction.
#if defined(__CUDACC__)
#define TO_COPY_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TO_COPY_HOST_DEVICE inline
#endif
struct FastDivider {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;
  uint32_t shift = 0;

  FastDivider() = default;
  explicit FastDivider(uint32_t d) : divisor(d) {
    while ((uint64_t{1} << shift) < d) ++shift;
    // 2^32 * (2^shift - d) / d + 1 < 2^32 because 2^shift - d < d.
    multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  // n / divisor for n < 2^31 (so that the sum below cannot wrap).
  TO_COPY_HOST_DEVICE uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
};
#undef TO_COPY_HOST_DEVICE

// Whether the 16-byte chunk kernel moves the plan: the words are 16 bytes (the innermost dim is
// contiguous on both sides and every size, stride, offset and base address is a multiple of 16
// bytes) and 32-bit indices suffice. Each thread then copies whole uint4 chunks.
inline bool chunk_copy_applies(const CopyPlan& plan) {
  const StridedCopy& c = plan.copy;
  return plan.count > 0 && plan.word_size == 16 && plan.fits_int32 && c.rank >= 1 && c.in_stride[c.rank - 1] == 1 &&
         c.out_stride[c.rank - 1] == 1;
}

// `in` and `out` are the base addresses (only their alignment is used).
CopyPlan plan_strided_copy(const StridedCopy& copy, size_t element_size, const void* in, const void* out);

// Whether the tiled (shared-memory transpose) kernel applies: after simplification, the dim
// contiguous in the output and the dim contiguous in the input are different dims.
inline bool tiled_copy_applies(const CopyPlan& plan) { return plan.tile_out >= 0 && plan.tile_in >= 0; }

}  // namespace tensoracle::backends::cuda
