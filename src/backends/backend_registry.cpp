// The list of backends compiled in. A new backend adds one row (guarded by its build option).
#include <utility>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
#include "backends/cuda/cuda_backend.h"
#endif
#include "core/errors.h"

namespace tensoracle::backends {

namespace {
using Factory = Result<std::unique_ptr<Backend>> (*)();
Result<std::unique_ptr<Backend>> cpu_factory() { return make_cpu_backend(); }
const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> table{
      {"cpu", &cpu_factory},
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
      {"cuda", &make_cuda_backend},  // fails without a usable GPU, naming why
#endif
  };
  return table;
}
}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

Result<std::unique_ptr<Backend>> create_backend(std::string_view name) {
  for (const auto& [n, factory] : registry())
    if (n == name) return factory();
  return not_found("no backend named '{}' in this build (available: {})", name, fmt::join(backend_names(), ", "));
}

}  // namespace tensoracle::backends
