// Engine: a verified, compatible engine file with its backend's plan restored (engine.h).
#include "tensoracle/engine.h"

#include <fmt/format.h>

#include "backends/registry.h"
#include "core/errors.h"
#include "engine/engine_validation.h"
#include "tensoracle/byte_size.h"

namespace tensoracle {

struct Engine::Impl {
  EngineFile file;
  std::shared_ptr<const backends::RestoredPlan> plan;
  std::shared_ptr<const Network> network;  // the plan's network, for the memory check of each shape
  ActivationLimit limit;
};

Result<Engine> Engine::from_file(EngineFile file, const PluginRegistry& plugins) {
  // The engine names the backend that built it; that backend restores it.
  auto backend = backends::create_backend(file.environment().backend);
  if (!backend.is_ok())
    return unsupported("engine '{}' cannot run here: it was built by the '{}' backend, which this build of tensoracle "
                       "does not have (it has: {})",
                       file.label(), file.environment().backend, fmt::join(backends::backend_names(), ", "));
  // Nothing of the plan reaches the backend before its sections agree with each other.
  TO_ASSIGN_OR_RETURN(ValidatedEngine validated, validate_engine(file, plugins));
  TO_ASSIGN_OR_RETURN(Environment here, probe_environment((*backend)->name()));
  TO_RETURN_IF_ERROR(check_engine_compatibility(file, here, plugins.fingerprints()));
  TO_ASSIGN_OR_RETURN(std::shared_ptr<const backends::RestoredPlan> plan, (*backend)->restore(file, validated.plan));
  std::shared_ptr<const Network> network = validated.plan.network;
  return Engine(std::make_shared<const Impl>(
      Impl{std::move(file), std::move(plan), std::move(network), std::move(validated.limit)}));
}

Result<Engine> Engine::deserialize(const void* data, size_t size, const std::string& label, const PluginRegistry& plugins) {
  TO_ASSIGN_OR_RETURN(EngineFile file, EngineFile::from_bytes(data, size, label));
  return from_file(std::move(file), plugins);
}

Result<Engine> Engine::open(const std::string& path, const PluginRegistry& plugins) {
  TO_ASSIGN_OR_RETURN(EngineFile file, EngineFile::open(path));
  return from_file(std::move(file), plugins);
}

const EngineFile& Engine::file() const { return impl_->file; }
const std::string& Engine::backend() const { return impl_->file.environment().backend; }
const IoTable& Engine::io_table() const { return impl_->file.io_table(); }

size_t Engine::num_profiles() const {
  const auto& tensors = io_table().tensors;
  return tensors.empty() ? 0 : tensors.front().profiles.size();
}

Result<IoTensor> Engine::tensor(const std::string& name) const {
  std::string known;
  for (const IoTensor& t : io_table().tensors) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  return not_found("engine '{}' has no input or output '{}' (it has: {})", impl_->file.label(), name, known);
}

std::vector<std::string> Engine::input_names() const {
  std::vector<std::string> names;
  for (const IoTensor& t : io_table().tensors)
    if (t.is_input) names.push_back(t.name);
  return names;
}

std::vector<std::string> Engine::output_names() const {
  std::vector<std::string> names;
  for (const IoTensor& t : io_table().tensors)
    if (!t.is_input) names.push_back(t.name);
  return names;
}

Result<Execution> Engine::create_execution(size_t profile) const {
  if (profile >= num_profiles())
    return invalid_argument("engine '{}': optimization profile {} does not exist (it has {})", impl_->file.label(), profile,
                            num_profiles());
  TO_ASSIGN_OR_RETURN(std::unique_ptr<backends::ExecutionBackend> backend, impl_->plan->create_execution());
  Execution exec(impl_, profile, std::move(backend));
  for (const IoTensor& t : io_table().tensors)
    if (t.is_input) TO_RETURN_IF_ERROR(exec.set_input_shape(t.name, t.profiles[profile].opt));
  return exec;
}

}  // namespace tensoracle

namespace tensoracle {
const IoTable& engine_io_table(const Engine::Impl& impl) { return impl.file.io_table(); }

Status check_activation_memory(const Engine::Impl& impl, const std::map<std::string, Dims>& input_shapes) {
  TO_ASSIGN_OR_RETURN(const uint64_t bytes, peak_activation_bytes(*impl.network, input_shapes));
  if (bytes > impl.limit.bytes)
    return invalid_argument("engine '{}': these input shapes need {} ({} bytes) of activation memory, more than the {} "
                            "of {}",
                            impl.file.label(), format_byte_size(bytes), bytes, format_byte_size(impl.limit.bytes),
                            impl.limit.source);
  return Status::ok();
}
}  // namespace tensoracle
