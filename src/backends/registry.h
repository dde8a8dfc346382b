// The one list of backends compiled into this build. The builder (src/build/) plans through it,
// the engine reader restores through it by the engine's recorded backend name, probe_environment
// asks it, and the CLI takes its --backend choices and their help text from it.
//
//   for (const BackendInfo& b : backend_registry()) std::printf("%s  %s\n", b.name, b.description);
//   TO_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, create_backend(engine_file.environment().backend));
//
// Adding a backend: its folder under src/backends/ and one line in registry.cpp, guarded by its
// CMake option (docs/backends.md).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"

namespace tensoracle::backends {

struct BackendInfo {
  const char* name;         // "cpu": what --backend and engine files call it
  const char* description;  // one line for --help
  std::unique_ptr<Backend> (*create)();  // needs no device
};

// The reference backend: in every build, first in the registry; every other backend is compared
// with it.
inline constexpr std::string_view kReferenceBackend = "cpu";

// Every backend of this build, the reference first.
const std::vector<BackendInfo>& backend_registry();
std::vector<std::string> backend_names();

// The backend `name`, or kNotFound naming the backends this build has.
Result<std::unique_ptr<Backend>> create_backend(std::string_view name);

}  // namespace tensoracle::backends
