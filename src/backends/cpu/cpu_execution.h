// The CPU backend behind Engine/Execution: the restored plan is the network (cpu_plan.h) whose
// constants borrow the engine's weight blobs; "device" buffers are host memory and the stream is
// ignored (enqueue runs synchronously).
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tensoracle::backends::cpu {

Result<std::shared_ptr<const RestoredPlan>> restore_cpu_engine(const EngineFile& file);

}  // namespace tensoracle::backends::cpu
