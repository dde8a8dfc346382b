// Defaults of the backend interface (backend.h).
#include "backends/backend.h"

#include "core/errors.h"

namespace tensoracle::backends {

Result<std::vector<LayerTiming>> ExecutionBackend::profile_layers(const std::map<std::string, Dims>&, const std::map<std::string, void*>&,
                                                                  void*, int) {
  return unsupported("this backend cannot time its layers separately");
}

}  // namespace tensoracle::backends
