// The list of backends compiled in (registry.h). A new backend adds one line, guarded by its
// build option.
#include "backends/registry.h"

#include "backends/cpu/cpu_backend.h"
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
#include "backends/cuda/cuda_backend.h"
#endif
#include "core/errors.h"

namespace tensoracle::backends {

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry{
      {"cpu", "the reference: every layer exactly as specified, fp64 arithmetic, host memory", &make_cpu_backend},
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
      {"cuda", "NVIDIA GPUs: cuBLASLt, cuDNN and own kernels, tactics timed on the GPU, device memory", &make_cuda_backend},
#endif
  };
  return registry;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const BackendInfo& info : backend_registry()) names.emplace_back(info.name);
  return names;
}

Result<std::unique_ptr<Backend>> create_backend(std::string_view name) {
  for (const BackendInfo& info : backend_registry())
    if (name == info.name) return info.create();
  return not_found("no backend '{}' in this build of tensoracle (it has: {}; the backends are chosen when tensoracle is "
                   "configured, docs/backends.md)",
                   name, fmt::join(backend_names(), ", "));
}

}  // namespace tensoracle::backends
