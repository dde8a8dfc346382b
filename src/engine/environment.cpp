// The environment: equality and JSON text (probing is probe_environment.cpp).
#include <tuple>

#include "core/errors.h"
#include "engine/environment_json.h"
#include "io/strict_json.h"
#include "tensoracle/environment.h"

namespace tensoracle {

std::string GpuProperties::compute_capability() const {
  return fmt::format("{}.{}", compute_capability_major, compute_capability_minor);
}

bool GpuProperties::operator==(const GpuProperties& other) const {
  const auto fields = [](const GpuProperties& g) {
    return std::tie(g.name, g.compute_capability_major, g.compute_capability_minor, g.sm_count, g.l2_cache_bytes,
                    g.memory_bus_width_bits, g.shared_memory_per_block_optin_bytes, g.shared_memory_per_sm_bytes,
                    g.total_memory_bytes, g.ecc_enabled, g.integrated);
  };
  return fields(*this) == fields(other);
}

bool CudaVersions::operator==(const CudaVersions& other) const {
  return runtime == other.runtime && driver == other.driver && cublaslt == other.cublaslt && cudnn == other.cudnn;
}

bool Environment::operator==(const Environment& other) const {
  return environment_to_json_value(*this) == environment_to_json_value(other);
}

std::string environment_to_json(const Environment& environment) {
  return environment_to_json_value(environment).dump(2);
}

Result<Environment> environment_from_json(std::string_view json_text, const std::string& source) {
  TO_ASSIGN_OR_RETURN(nlohmann::json value, parse_strict_json(json_text, source));
  return environment_from_json_value(JsonField(value, source));
}

}  // namespace tensoracle
