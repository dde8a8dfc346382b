#include "backends/cuda/kernels/copy_plan.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace tensoracle::backends::cuda {

namespace {
struct Dim {
  int64_t shape, in_stride, out_stride;
};

// Largest |offset| the copy reaches on one side, for the int32 decision.
int64_t reach(const StridedCopy& c, bool input) {
  int64_t r = std::abs(input ? c.in_offset : c.out_offset);
  for (int d = 0; d < c.rank; ++d) r += (c.shape[d] - 1) * std::abs(input ? c.in_stride[d] : c.out_stride[d]);
  return r;
}

// Groups consecutive elements of the innermost dim into words of `word` bytes: the base
// addresses must be word-aligned and every size, stride and offset a whole number of words.
bool try_widen(CopyPlan& p, size_t word, uintptr_t in_addr, uintptr_t out_addr) {
  StridedCopy& c = p.copy;
  const int64_t factor = static_cast<int64_t>(word / p.word_size);
  if (word % p.word_size != 0 || in_addr % word != 0 || out_addr % word != 0) return false;
  if (c.in_offset % factor != 0 || c.out_offset % factor != 0 || c.shape[c.rank - 1] % factor != 0) return false;
  for (int d = 0; d + 1 < c.rank; ++d)
    if (c.in_stride[d] % factor != 0 || c.out_stride[d] % factor != 0) return false;
  c.shape[c.rank - 1] /= factor;
  for (int d = 0; d + 1 < c.rank; ++d) {
    c.in_stride[d] /= factor;
    c.out_stride[d] /= factor;
  }
  c.in_offset /= factor;
  c.out_offset /= factor;
  p.word_size = word;
  return true;
}
}  // namespace

CopyPlan plan_strided_copy(const StridedCopy& copy, size_t element_size, const void* in, const void* out) {
  CopyPlan plan;
  plan.word_size = element_size;
  Dim dims[StridedCopy::kMaxRank];
  int rank = 0;
  for (int d = 0; d < copy.rank; ++d) {
    if (copy.shape[d] == 0) return plan;  // empty
    if (copy.shape[d] == 1) continue;
    dims[rank++] = {copy.shape[d], copy.in_stride[d], copy.out_stride[d]};
  }
  // Output memory order, outermost first; ties (broadcast-like zero strides) keep input order.
  std::stable_sort(dims, dims + rank, [](const Dim& a, const Dim& b) {
    return std::abs(a.out_stride) > std::abs(b.out_stride);
  });
  // Merge a dim into its inner neighbour when both sides step over it contiguously.
  int merged = 0;
  for (int d = 0; d < rank; ++d) {
    if (merged > 0) {
      Dim& outer = dims[merged - 1];
      const Dim& inner = dims[d];
      if (outer.in_stride == inner.in_stride * inner.shape && outer.out_stride == inner.out_stride * inner.shape) {
        outer = {outer.shape * inner.shape, inner.in_stride, inner.out_stride};
        continue;
      }
    }
    dims[merged++] = dims[d];
  }
  StridedCopy& c = plan.copy;
  c.rank = merged;
  c.in_offset = copy.in_offset;
  c.out_offset = copy.out_offset;
  for (int d = 0; d < merged; ++d) {
    c.shape[d] = dims[d].shape;
    c.in_stride[d] = dims[d].in_stride;
    c.out_stride[d] = dims[d].out_stride;
  }
  if (merged > 0 && c.in_stride[merged - 1] == 1 && c.out_stride[merged - 1] == 1) {
    const auto in_addr = reinterpret_cast<uintptr_t>(in), out_addr = reinterpret_cast<uintptr_t>(out);
    for (size_t word : {size_t{16}, size_t{8}, size_t{4}, size_t{2}})
      if (word > plan.word_size && try_widen(plan, word, in_addr, out_addr)) break;
  }
  plan.count = 1;
  for (int d = 0; d < c.rank; ++d) plan.count *= c.shape[d];
  // Half the int32 range: a grid-stride step past the last index must not overflow either.
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max() / 2;
  plan.fits_int32 = plan.count <= kLimit && reach(c, true) <= kLimit && reach(c, false) <= kLimit;
  if (c.rank >= 2 && c.out_stride[c.rank - 1] == 1 && c.in_stride[c.rank - 1] != 1) {
    for (int d = 0; d + 1 < c.rank; ++d)
      if (c.in_stride[d] == 1) {
        plan.tile_out = c.rank - 1;
        plan.tile_in = d;
      }
  }
  return plan;
}

}  // namespace tensoracle::backends::cuda
