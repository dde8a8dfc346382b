// probe_environment (environment.h): what every engine records, plus its backend's part.
#include <sys/utsname.h>

#include "backends/registry.h"
#include "core/errors.h"
#include "tensoracle/environment.h"
#include "tensoracle/version.h"

namespace tensoracle {

Result<Environment> probe_environment(std::string_view backend_name) {
  TO_ASSIGN_OR_RETURN(std::unique_ptr<backends::Backend> backend, backends::create_backend(backend_name));
  Environment environment;
  environment.backend = std::string(backend->name());
  environment.tensoracle_version = TENSORACLE_VERSION_STRING;
  struct utsname names {};
  if (::uname(&names) == 0) {
    environment.os = names.sysname;
    environment.cpu_arch = names.machine;
  } else {
    environment.os = "unknown";
    environment.cpu_arch = "unknown";
  }
  backend->probe(environment);
  return environment;
}

}  // namespace tensoracle
