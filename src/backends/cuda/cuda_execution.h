// The CUDA backend behind Engine/Execution: the plan's constants go to the device once per engine
// (LoadedPlan); each execution context gets its own runtime (handles, tactics, arena, CUDA graph).
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tensoracle::backends::cuda {

// deserialize_plan's checks, then the constants go to the device and the tactics are replayed.
Result<std::shared_ptr<const RestoredPlan>> restore_cuda_engine(const EngineFile& file, const CheckedPlan& plan);

}  // namespace tensoracle::backends::cuda
