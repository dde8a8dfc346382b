// The CPU backend behind Engine/Execution: the restored plan is the network (cpu_plan.h) whose
// constants borrow the engine's weight blobs; "device" buffers are host memory and the stream is
// ignored (enqueue runs synchronously).
#pragma once

#include <memory>

#include "backends/backend.h"

namespace tensoracle::backends::cpu {

// check_cpu_plan, then the plan's network (its constants borrowing the engine's blobs) runs as is.
Result<std::shared_ptr<const RestoredPlan>> restore_cpu_engine(const EngineFile& file, const CheckedPlan& plan);

}  // namespace tensoracle::backends::cpu
