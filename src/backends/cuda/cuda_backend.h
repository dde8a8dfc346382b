// The production backend for NVIDIA GPUs: tactics on cuBLASLt, cuDNN and own kernels, chosen by
// timing on the current GPU (planner.h), run by the runtime (runtime.h). docs/cuda-backend.md.
//
// Backend::execute plans the network for exactly the given input shapes (optimization level 0:
// the first candidate of the preferred family, nothing timed), uploads the inputs, runs once on
// a private stream and downloads every output: the path the op harness and examples use to
// compare this backend with the CPU reference. Engines go through plan() (planner.h, plan_json.h)
// and restore() (cuda_execution.h) instead.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tensoracle::backends {

// Needs no GPU: plan, restore and execute fail with kFailedPrecondition naming why when this
// process has no usable CUDA device (usable() says so up front).
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace tensoracle::backends
