// The top-k kernel: per line of the axis, a bitonic sort of (order key, index) pairs in one
// thread block, then the first k (docs/ops.md "Top-k").
//
// The order key maps each value to an unsigned integer whose ascending order is the requested
// order: floats by their sign-magnitude bits with every NaN above +inf and -0 equal to +0,
// integers by their offset bits; for `largest` the key is complemented. Sorting by (key, index)
// keeps ties in index order, so the result is the reference's stable sort exactly.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

struct TopKArgs {
  int64_t outer = 1, size = 1, inner = 1;  // the input viewed as [outer, size, inner]
  int64_t k = 1;
  bool largest = true;
};

struct TopKPlan {
  int64_t sort_length = 1;     // a power of two >= size
  bool in_shared = true;       // pairs sorted in shared memory, else in the workspace
  size_t shared_bytes = 0;     // dynamic shared memory per block (in_shared)
  int64_t blocks = 1;          // thread blocks (each sorts one line at a time)
  size_t workspace_bytes = 0;  // (!in_shared) one sort buffer per block
};

// Lines whose pairs fit in this much shared memory sort there; every supported GPU (sm_80+)
// allows at least this much per block.
constexpr size_t kTopKSharedLimit = 96 * 1024;

// The input types top-k takes: fp32, fp16, bf16, int32, int64.
bool top_k_supports(DataType type);
TopKPlan plan_top_k(DataType type, const TopKArgs& args);
// Allows the kernel the plan's dynamic shared memory (call once before launches; not on the hot path).
cudaError_t prepare_top_k(DataType type, const TopKPlan& plan);
// `values` has the input's type; `indices` is int64. `workspace` holds plan.workspace_bytes.
cudaError_t launch_top_k(DataType type, const void* in, void* values, int64_t* indices, const TopKArgs& args,
                         const TopKPlan& plan, void* workspace, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
