// Which backend restores an engine's plan.
#include "core/errors.h"
#include "engine/cpu_execution.h"
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
#include "engine/cuda_execution.h"
#endif

namespace tensoracle {

Result<std::vector<LayerTiming>> ExecutionBackend::profile_layers(const std::map<std::string, void*>&, void*, int) {
  return unsupported("this backend cannot time its layers separately");
}

Result<std::shared_ptr<const RestoredPlan>> restore_plan(const EngineFile& file) {
  const std::string& backend = file.environment().backend;
  if (backend == "cpu") return restore_cpu_engine_plan(file);
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
  if (backend == "cuda") return restore_cuda_engine_plan(file);
#endif
  return unsupported("engine '{}': this build cannot run plans of the '{}' backend", file.label(), backend);
}

}  // namespace tensoracle
