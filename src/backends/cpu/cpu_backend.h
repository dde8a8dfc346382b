// The CPU reference backend: the executable specification of every layer (docs/ops.md).
//
// Storage: every tensor is held as fp64 values, each rounded to its tensor's type after the layer
// that produces it (fp32 values are exactly representable fp32 numbers, fp16/bf16/fp8 values are
// exactly representable in those formats, integers are integral and in range, bool is 0 or 1).
// Arithmetic is fp64, so dot products and reductions accumulate in fp64.
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tensoracle::backends {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace tensoracle::backends
