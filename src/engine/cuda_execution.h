// Restoring a CUDA backend plan: the plan's constants go to the device once per engine; each
// execution context gets its own runtime (handles, tactics, arena, CUDA graph).
#pragma once

#include "engine/execution_backend.h"

namespace tensoracle {

Result<std::shared_ptr<const RestoredPlan>> restore_cuda_engine_plan(const EngineFile& file);

}  // namespace tensoracle
