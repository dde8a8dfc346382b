#include "engine/environment_json.h"

#include <algorithm>
#include <charconv>

#include "core/errors.h"
#include "core/quoted.h"

namespace tensoracle {
namespace {

using nlohmann::json;

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

Result<GpuProperties> gpu_from_json(const JsonField& value) {
  GpuProperties gpu;
  TO_ASSIGN_OR_RETURN(gpu.name, value.get_string("name"));
  TO_ASSIGN_OR_RETURN(const std::string capability, value.get_string("compute_capability"));
  const size_t dot = capability.find('.');
  auto major = parse_small_int(std::string_view(capability).substr(0, dot));
  auto minor = dot == std::string::npos ? Result<int>(corrupt_data("")) : parse_small_int(capability.substr(dot + 1));
  if (!major.is_ok() || !minor.is_ok())
    return value.error("field 'compute_capability' must look like \"9.0\", got {}", quote(capability));
  gpu.compute_capability_major = *major;
  gpu.compute_capability_minor = *minor;
  TO_ASSIGN_OR_RETURN(const int64_t sm_count, value.get_int("sm_count", 0, INT32_MAX));
  gpu.sm_count = static_cast<int>(sm_count);
  TO_ASSIGN_OR_RETURN(gpu.l2_cache_bytes, value.get_int("l2_cache_bytes", 0));
  TO_ASSIGN_OR_RETURN(const int64_t bus_width, value.get_int("memory_bus_width_bits", 0, INT32_MAX));
  gpu.memory_bus_width_bits = static_cast<int>(bus_width);
  TO_ASSIGN_OR_RETURN(gpu.shared_memory_per_block_optin_bytes, value.get_int("shared_memory_per_block_optin_bytes", 0));
  TO_ASSIGN_OR_RETURN(gpu.shared_memory_per_sm_bytes, value.get_int("shared_memory_per_sm_bytes", 0));
  TO_ASSIGN_OR_RETURN(gpu.total_memory_bytes, value.get_int("total_memory_bytes", 0));
  TO_ASSIGN_OR_RETURN(gpu.ecc_enabled, value.get_bool("ecc_enabled"));
  TO_ASSIGN_OR_RETURN(gpu.integrated, value.get_bool("integrated"));
  return gpu;
}

json cuda_to_json(const CudaVersions& cuda) {
  return json{{"runtime", cuda.runtime}, {"driver", cuda.driver}, {"cublaslt", cuda.cublaslt}, {"cudnn", cuda.cudnn}};
}

Result<CudaVersions> cuda_from_json(const JsonField& value) {
  CudaVersions cuda;
  TO_ASSIGN_OR_RETURN(cuda.runtime, value.get_string("runtime"));
  TO_ASSIGN_OR_RETURN(cuda.driver, value.get_string("driver"));
  TO_ASSIGN_OR_RETURN(cuda.cublaslt, value.get_string("cublaslt"));
  TO_ASSIGN_OR_RETURN(cuda.cudnn, value.get_string("cudnn"));
  return cuda;
}

}  // namespace

json environment_to_json_value(const Environment& environment) {
  return json{{"backend", environment.backend},
              {"gpu", environment.gpu ? gpu_to_json(*environment.gpu) : json(nullptr)},
              {"cuda", environment.cuda ? cuda_to_json(*environment.cuda) : json(nullptr)},
              {"tensoracle_version", environment.tensoracle_version},
              {"os", environment.os},
              {"cpu_arch", environment.cpu_arch}};
}

Result<Environment> environment_from_json_value(const JsonField& value) {
  Environment environment;
  TO_ASSIGN_OR_RETURN(environment.backend, value.get_name("backend"));
  TO_ASSIGN_OR_RETURN(const JsonField gpu, value.member("gpu"));
  if (!gpu.is_null()) {
    TO_ASSIGN_OR_RETURN(environment.gpu, gpu_from_json(gpu));
  }
  TO_ASSIGN_OR_RETURN(const JsonField cuda, value.member("cuda"));
  if (!cuda.is_null()) {
    TO_ASSIGN_OR_RETURN(environment.cuda, cuda_from_json(cuda));
  }
  TO_ASSIGN_OR_RETURN(environment.tensoracle_version, value.get_string("tensoracle_version"));
  TO_ASSIGN_OR_RETURN(environment.os, value.get_string("os"));
  TO_ASSIGN_OR_RETURN(environment.cpu_arch, value.get_string("cpu_arch"));
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
                       {"bundle_manifest_sha256", plugin.bundle_manifest_sha256},
                       {"library", plugin.library}});
  return out;
}

Result<std::vector<PluginFingerprint>> plugins_from_json_value(const JsonField& value) {
  TO_ASSIGN_OR_RETURN(const size_t count, value.array_size());
  std::vector<PluginFingerprint> plugins;
  for (size_t i = 0; i < count; ++i) {
    const JsonField entry = value.element(i);
    PluginFingerprint plugin;
    TO_ASSIGN_OR_RETURN(plugin.name, entry.get_name("name"));
    TO_ASSIGN_OR_RETURN(plugin.version, entry.get_string("version"));
    TO_ASSIGN_OR_RETURN(plugin.library_sha256, entry.get_string("library_sha256"));
    TO_ASSIGN_OR_RETURN(plugin.bundle_manifest_sha256, entry.get_string("bundle_manifest_sha256"));
    TO_ASSIGN_OR_RETURN(plugin.library, entry.get_string("library"));
    plugins.push_back(std::move(plugin));
  }
  return plugins;
}

json shape_range_to_json_value(const ShapeRange& range) {
  return json{{"min", range.min.values()}, {"opt", range.opt.values()}, {"max", range.max.values()}};
}

Result<ShapeRange> shape_range_from_json_value(const JsonField& value) {
  ShapeRange range;
  TO_ASSIGN_OR_RETURN(range.min, value.get_dims("min"));
  TO_ASSIGN_OR_RETURN(range.opt, value.get_dims("opt"));
  TO_ASSIGN_OR_RETURN(range.max, value.get_dims("max"));
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
                           {"format", std::string(tensor_format_name(tensor.format))},
                           {"profiles", std::move(profiles)}});
  }
  return json{{"tensors", std::move(tensors)}};
}

Result<IoTable> io_table_from_json_value(const JsonField& value) {
  TO_ASSIGN_OR_RETURN(const JsonField tensors, value.member("tensors"));
  TO_ASSIGN_OR_RETURN(const size_t count, tensors.array_size());
  IoTable table;
  for (size_t i = 0; i < count; ++i) {
    const JsonField entry = tensors.element(i);
    IoTensor tensor;
    TO_ASSIGN_OR_RETURN(tensor.name, entry.get_name("name"));
    TO_ASSIGN_OR_RETURN(const JsonField role, entry.member("role"));
    TO_ASSIGN_OR_RETURN(const std::string role_name, role.as_string());
    if (role_name != "input" && role_name != "output")
      return role.error("expected \"input\" or \"output\", got {}", role.shown());
    tensor.is_input = role_name == "input";
    TO_ASSIGN_OR_RETURN(const JsonField dtype, entry.member("dtype"));
    TO_ASSIGN_OR_RETURN(const std::string dtype_name, dtype.as_string());
    auto parsed = parse_data_type(dtype_name);
    if (!parsed.is_ok() || data_type_name(*parsed) != dtype_name)
      return dtype.error("expected a data type name, got {}", dtype.shown());
    tensor.dtype = *parsed;
    TO_ASSIGN_OR_RETURN(const JsonField format, entry.member("format"));
    TO_ASSIGN_OR_RETURN(const std::string format_name, format.as_string());
    auto parsed_format = parse_tensor_format(format_name);
    if (!parsed_format.is_ok() || tensor_format_name(*parsed_format) != format_name)
      return format.error("expected LINEAR, HWC or HWC8, got {}", format.shown());
    tensor.format = *parsed_format;
    TO_ASSIGN_OR_RETURN(const JsonField profiles, entry.member("profiles"));
    TO_ASSIGN_OR_RETURN(const size_t profile_count, profiles.array_size());
    for (size_t p = 0; p < profile_count; ++p) {
      TO_ASSIGN_OR_RETURN(ShapeRange range, shape_range_from_json_value(profiles.element(p)));
      tensor.profiles.push_back(std::move(range));
    }
    table.tensors.push_back(std::move(tensor));
  }
  Status valid = table.validate();
  if (!valid.is_ok()) return value.error("{}", valid.message());
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
    if (has_nul(tensor.name)) return invalid_argument("the I/O tensor name {} holds a NUL byte", quote(tensor.name));
    if (std::find(names.begin(), names.end(), tensor.name) != names.end())
      return invalid_argument("I/O tensor name {} appears twice", quote(tensor.name));
    names.push_back(tensor.name);
    if (tensor.is_input && seen_output)
      return invalid_argument("input {} follows an output (inputs come first)", quote(tensor.name));
    seen_output = seen_output || !tensor.is_input;
    if (tensor.profiles.size() != tensors.front().profiles.size())
      return invalid_argument("tensor {} has {} profiles, tensor {} has {}", quote(tensor.name), tensor.profiles.size(),
                              quote(tensors.front().name), tensors.front().profiles.size());
    for (size_t p = 0; p < tensor.profiles.size(); ++p) {
      const ShapeRange& range = tensor.profiles[p];
      const size_t rank = range.min.rank();
      if (range.opt.rank() != rank || range.max.rank() != rank)
        return invalid_argument("tensor {}, profile {}: min {}, opt {} and max {} differ in rank", quote(tensor.name), p,
                                range.min.to_string(), range.opt.to_string(), range.max.to_string());
      for (size_t d = 0; d < rank; ++d) {
        const int64_t lo = range.min[d], mid = range.opt[d], hi = range.max[d];
        const bool run_time_dim = !tensor.is_input && lo == -1 && mid == -1 && hi == -1;
        if (run_time_dim) continue;
        if (lo < 0 || !(lo <= mid && mid <= hi))
          return invalid_argument("tensor {}, profile {}, dimension {}: need 0 <= min <= opt <= max, got {} {} {}",
                                  quote(tensor.name), p, d, lo, mid, hi);
      }
    }
  }
  return Status::ok();
}

}  // namespace tensoracle
