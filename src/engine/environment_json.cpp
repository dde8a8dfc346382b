#include "engine/environment_json.h"

#include <algorithm>
#include <charconv>

#include "core/errors.h"
#include "engine/json_fields.h"
#include "io/strict_json.h"

namespace tensoracle {
namespace {

using nlohmann::json;
using namespace json_fields;

json gpu_to_json(const GpuProperties& gpu) {
  return json{{"name", gpu.name},
              {"compute_capability", gpu.compute_capability()},
              {"sm_count", gpu.sm_count},
              {"l2_cache_bytes", gpu.l2_cache_bytes},
              {"memory_bus_width_bits", gpu.memory_bus_width_bits},
              {"shared_memory_per_block_optin_bytes", gpu.shared_memory_per_block_optin_bytes},
              {"shared_memory_per_sm_bytes", gpu.shared_memory_per_sm_bytes},
              {"total_memory_bytes", gpu.total_memory_bytes},
              {"ecc_enabled", gpu.ecc_enabled},
              {"integrated", gpu.integrated}};
}

Result<int> parse_small_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > 1000)
    return corrupt_data("not a small integer");
  return value;
}

Result<GpuProperties> gpu_from_json(const json& value, const std::string& where) {
  GpuProperties gpu;
  TO_ASSIGN_OR_RETURN(gpu.name, get_string(value, "name", where));
  TO_ASSIGN_OR_RETURN(const std::string capability, get_string(value, "compute_capability", where));
  const size_t dot = capability.find('.');
  auto major = parse_small_int(std::string_view(capability).substr(0, dot));
  auto minor = dot == std::string::npos ? Result<int>(corrupt_data("")) : parse_small_int(capability.substr(dot + 1));
  if (!major.is_ok() || !minor.is_ok())
    return corrupt_data("{}: field 'compute_capability' must look like \"9.0\", got \"{}\"", where, capability);
  gpu.compute_capability_major = *major;
  gpu.compute_capability_minor = *minor;
  TO_ASSIGN_OR_RETURN(const int64_t sm_count, get_int(value, "sm_count", where));
  gpu.sm_count = static_cast<int>(std::clamp<int64_t>(sm_count, 0, INT32_MAX));
  TO_ASSIGN_OR_RETURN(gpu.l2_cache_bytes, get_int(value, "l2_cache_bytes", where));
  TO_ASSIGN_OR_RETURN(const int64_t bus_width, get_int(value, "memory_bus_width_bits", where));
  gpu.memory_bus_width_bits = static_cast<int>(std::clamp<int64_t>(bus_width, 0, INT32_MAX));
  TO_ASSIGN_OR_RETURN(gpu.shared_memory_per_block_optin_bytes,
                      get_int(value, "shared_memory_per_block_optin_bytes", where));
  TO_ASSIGN_OR_RETURN(gpu.shared_memory_per_sm_bytes, get_int(value, "shared_memory_per_sm_bytes", where));
  TO_ASSIGN_OR_RETURN(gpu.total_memory_bytes, get_int(value, "total_memory_bytes", where));
  TO_ASSIGN_OR_RETURN(gpu.ecc_enabled, get_bool(value, "ecc_enabled", where));
  TO_ASSIGN_OR_RETURN(gpu.integrated, get_bool(value, "integrated", where));
  return gpu;
}

json cuda_to_json(const CudaVersions& cuda) {
  return json{{"runtime", cuda.runtime}, {"driver", cuda.driver}, {"cublaslt", cuda.cublaslt}, {"cudnn", cuda.cudnn}};
}

Result<CudaVersions> cuda_from_json(const json& value, const std::string& where) {
  CudaVersions cuda;
  TO_ASSIGN_OR_RETURN(cuda.runtime, get_string(value, "runtime", where));
  TO_ASSIGN_OR_RETURN(cuda.driver, get_string(value, "driver", where));
  TO_ASSIGN_OR_RETURN(cuda.cublaslt, get_string(value, "cublaslt", where));
  TO_ASSIGN_OR_RETURN(cuda.cudnn, get_string(value, "cudnn", where));
  return cuda;
}

bool known_format(const std::string& format) { return format == "linear" || format == "hwc" || format == "hwc8"; }

}  // namespace

json environment_to_json_value(const Environment& environment) {
  return json{{"backend", environment.backend},
              {"gpu", environment.gpu ? gpu_to_json(*environment.gpu) : json(nullptr)},
              {"cuda", environment.cuda ? cuda_to_json(*environment.cuda) : json(nullptr)},
              {"tensoracle_version", environment.tensoracle_version},
              {"os", environment.os},
              {"cpu_arch", environment.cpu_arch}};
}

Result<Environment> environment_from_json_value(const json& value, const std::string& where) {
  Environment environment;
  TO_ASSIGN_OR_RETURN(environment.backend, get_string(value, "backend", where));
  TO_ASSIGN_OR_RETURN(const json* gpu, member(value, "gpu", where));
  if (!gpu->is_null()) {
    TO_ASSIGN_OR_RETURN(environment.gpu, gpu_from_json(*gpu, where + ", gpu"));
  }
  TO_ASSIGN_OR_RETURN(const json* cuda, member(value, "cuda", where));
  if (!cuda->is_null()) {
    TO_ASSIGN_OR_RETURN(environment.cuda, cuda_from_json(*cuda, where + ", cuda"));
  }
  TO_ASSIGN_OR_RETURN(environment.tensoracle_version, get_string(value, "tensoracle_version", where));
  TO_ASSIGN_OR_RETURN(environment.os, get_string(value, "os", where));
  TO_ASSIGN_OR_RETURN(environment.cpu_arch, get_string(value, "cpu_arch", where));
  return environment;
}

json plugins_to_json_value(const std::vector<PluginFingerprint>& plugins) {
  std::vector<PluginFingerprint> sorted = plugins;
  std::sort(sorted.begin(), sorted.end(), [](const PluginFingerprint& a, const PluginFingerprint& b) {
    return std::tie(a.name, a.version, a.library_sha256) < std::tie(b.name, b.version, b.library_sha256);
  });
  json out = json::array();
  for (const auto& plugin : sorted)
    out.push_back(json{{"name", plugin.name},
                       {"version", plugin.version},
                       {"library_sha256", plugin.library_sha256},
                       {"bundle_manifest_sha256", plugin.bundle_manifest_sha256}});
  return out;
}

Result<std::vector<PluginFingerprint>> plugins_from_json_value(const json& value, const std::string& where) {
  if (!value.is_array()) return corrupt_data("{}: plugins must be an array, got {}", where, json_type_name(value));
  std::vector<PluginFingerprint> plugins;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = fmt::format("{}, plugin {}", where, i);
    PluginFingerprint plugin;
    TO_ASSIGN_OR_RETURN(plugin.name, get_string(value[i], "name", at));
    TO_ASSIGN_OR_RETURN(plugin.version, get_string(value[i], "version", at));
    TO_ASSIGN_OR_RETURN(plugin.library_sha256, get_string(value[i], "library_sha256", at));
    TO_ASSIGN_OR_RETURN(plugin.bundle_manifest_sha256, get_string(value[i], "bundle_manifest_sha256", at));
    plugins.push_back(std::move(plugin));
  }
  return plugins;
}

json shape_range_to_json_value(const ShapeRange& range) {
  return json{{"min", dims_to_json(range.min)}, {"opt", dims_to_json(range.opt)}, {"max", dims_to_json(range.max)}};
}

Result<ShapeRange> shape_range_from_json_value(const json& value, const std::string& where) {
  ShapeRange range;
  TO_ASSIGN_OR_RETURN(range.min, get_dims(value, "min", where));
  TO_ASSIGN_OR_RETURN(range.opt, get_dims(value, "opt", where));
  TO_ASSIGN_OR_RETURN(range.max, get_dims(value, "max", where));
  return range;
}

json io_table_to_json_value(const IoTable& table) {
  json tensors = json::array();
  for (const IoTensor& tensor : table.tensors) {
    json profiles = json::array();
    for (const ShapeRange& range : tensor.profiles) profiles.push_back(shape_range_to_json_value(range));
    tensors.push_back(json{{"name", tensor.name},
                           {"role", tensor.is_input ? "input" : "output"},
                           {"dtype", std::string(data_type_name(tensor.dtype))},
                           {"format", tensor.format},
                           {"profiles", std::move(profiles)}});
  }
  return json{{"tensors", std::move(tensors)}};
}

Result<IoTable> io_table_from_json_value(const json& value, const std::string& where) {
  TO_ASSIGN_OR_RETURN(const json* tensors, member(value, "tensors", where));
  if (!tensors->is_array())
    return corrupt_data("{}: field 'tensors' must be an array, got {}", where, json_type_name(*tensors));
  IoTable table;
  for (size_t i = 0; i < tensors->size(); ++i) {
    const json& entry = (*tensors)[i];
    std::string at = fmt::format("{}, tensor {}", where, i);
    IoTensor tensor;
    TO_ASSIGN_OR_RETURN(tensor.name, get_string(entry, "name", at));
    at = fmt::format("{}, tensor '{}'", where, tensor.name);
    TO_ASSIGN_OR_RETURN(const std::string role, get_string(entry, "role", at));
    if (role != "input" && role != "output")
      return corrupt_data("{}: field 'role' must be \"input\" or \"output\", got \"{}\"", at, role);
    tensor.is_input = role == "input";
    TO_ASSIGN_OR_RETURN(const std::string dtype, get_string(entry, "dtype", at));
    auto parsed = parse_data_type(dtype);
    if (!parsed.is_ok() || data_type_name(*parsed) != dtype)
      return corrupt_data("{}: field 'dtype' holds \"{}\", not a data type name", at, dtype);
    tensor.dtype = *parsed;
    TO_ASSIGN_OR_RETURN(tensor.format, get_string(entry, "format", at));
    TO_ASSIGN_OR_RETURN(const json* profiles, member(entry, "profiles", at));
    if (!profiles->is_array())
      return corrupt_data("{}: field 'profiles' must be an array, got {}", at, json_type_name(*profiles));
    for (size_t p = 0; p < profiles->size(); ++p) {
      TO_ASSIGN_OR_RETURN(ShapeRange range,
                          shape_range_from_json_value((*profiles)[p], fmt::format("{}, profile {}", at, p)));
      tensor.profiles.push_back(std::move(range));
    }
    table.tensors.push_back(std::move(tensor));
  }
  Status valid = table.validate();
  if (!valid.is_ok()) return Status(StatusCode::kCorruptData, fmt::format("{}: {}", where, valid.message()));
  return table;
}

bool IoTensor::operator==(const IoTensor& other) const {
  return name == other.name && is_input == other.is_input && dtype == other.dtype && format == other.format &&
         profiles == other.profiles;
}

Status IoTable::validate() const {
  std::vector<std::string> names;
  bool seen_output = false;
  for (const IoTensor& tensor : tensors) {
    if (tensor.name.empty()) return invalid_argument("an I/O tensor has an empty name");
    if (std::find(names.begin(), names.end(), tensor.name) != names.end())
      return invalid_argument("I/O tensor name '{}' appears twice", tensor.name);
    names.push_back(tensor.name);
    if (tensor.is_input && seen_output)
      return invalid_argument("input '{}' follows an output (inputs come first)", tensor.name);
    seen_output = seen_output || !tensor.is_input;
    if (!known_format(tensor.format))
      return invalid_argument("tensor '{}': unknown format '{}' (expected linear, hwc or hwc8)", tensor.name,
                              tensor.format);
    if (tensor.profiles.size() != tensors.front().profiles.size())
      return invalid_argument("tensor '{}' has {} profiles, tensor '{}' has {}", tensor.name, tensor.profiles.size(),
                              tensors.front().name, tensors.front().profiles.size());
    for (size_t p = 0; p < tensor.profiles.size(); ++p) {
      const ShapeRange& range = tensor.profiles[p];
      const size_t rank = range.min.rank();
      if (range.opt.rank() != rank || range.max.rank() != rank)
        return invalid_argument("tensor '{}', profile {}: min {}, opt {} and max {} differ in rank", tensor.name, p,
                                range.min.to_string(), range.opt.to_string(), range.max.to_string());
      for (size_t d = 0; d < rank; ++d) {
        const int64_t lo = range.min[d], mid = range.opt[d], hi = range.max[d];
        const bool run_time_dim = !tensor.is_input && lo == -1 && mid == -1 && hi == -1;
        if (run_time_dim) continue;
        if (lo < 0 || !(lo <= mid && mid <= hi))
          return invalid_argument("tensor '{}', profile {}, dimension {}: need 0 <= min <= opt <= max, got {} {} {}",
                                  tensor.name, p, d, lo, mid, hi);
      }
    }
  }
  return Status::ok();
}

}  // namespace tensoracle
