// The production backend (SPEC "Backends"): tactics on cuBLASLt, cuDNN and own kernels, chosen
// by timing on the current GPU (planner.h), run by the runtime (runtime.h).
//
// Backend::execute plans the network for exactly the given input shapes (optimization level 0:
// the first candidate of the preferred family, nothing timed), uploads the inputs, runs once on
// a private stream and downloads every output: the path the op harness and examples use to
// compare this backend with the CPU reference. Engines go through planner + plan_json instead.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tensoracle::backends {

// Fails with kFailedPrecondition when this process has no usable CUDA device.
Result<std::unique_ptr<Backend>> make_cuda_backend();

}  // namespace tensoracle::backends
