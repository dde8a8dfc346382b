// Restoring a CPU backend plan into something executions can run.
#pragma once

#include "engine/execution_backend.h"

namespace tensoracle {

Result<std::shared_ptr<const RestoredPlan>> restore_cpu_engine_plan(const EngineFile& file);

}  // namespace tensoracle
