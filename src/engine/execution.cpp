// Execution: input shapes within the profile, caller-owned bindings, enqueue (engine.h).
#include <fmt/format.h>

#include "core/counted.h"
#include "core/errors.h"
#include "backends/backend.h"
#include "tensoracle/engine.h"

namespace tensoracle {

Execution::Execution(std::shared_ptr<const Engine::Impl> engine, size_t profile, std::unique_ptr<backends::ExecutionBackend> backend)
    : engine_(std::move(engine)), profile_(profile), backend_(std::move(backend)) {}
Execution::Execution(Execution&&) noexcept = default;
Execution& Execution::operator=(Execution&&) noexcept = default;
Execution::~Execution() = default;

namespace {

const IoTensor* find_io(const IoTable& table, const std::string& name) {
  for (const IoTensor& t : table.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// "input 'a' shape [1,3], input 'b' shape [2]".
std::string shapes_text(const std::map<std::string, Dims>& shapes) {
  std::string text;
  for (const auto& [name, shape] : shapes)
    text += fmt::format("{}input '{}' shape {}", text.empty() ? "" : ", ", name, shape.to_string());
  return text;
}

// The shape checks of set_input_shape, shared with Engine::check_input.
Status check_shape_in_profile(const IoTensor& io, size_t profile, const Dims& shape) {
  const ShapeRange& range = io.profiles[profile];
  if (shape.rank() != range.min.rank())
    return invalid_argument("input '{}': shape {} has rank {}, the engine expects rank {} (profile {}: min {}, max {})",
                            io.name, shape.to_string(), shape.rank(), range.min.rank(), profile, range.min.to_string(),
                            range.max.to_string());
  for (size_t d = 0; d < shape.rank(); ++d) {
    if (shape[d] < range.min[d] || shape[d] > range.max[d])
      return invalid_argument("input '{}': dim {} is {}, outside the range [{}, {}] of optimization profile {} (shape {})",
                              io.name, d, shape[d], range.min[d], range.max[d], profile, shape.to_string());
  }
  return Status::ok();
}

}  // namespace

Status Engine::check_input(const std::string& name, DataType dtype, const Dims& shape, size_t profile) const {
  if (profile >= num_profiles())
    return invalid_argument("the engine has {}; there is no profile {}", counted(num_profiles(), "optimization profile"),
                            profile);
  const IoTensor* io = find_io(io_table(), name);
  if (io == nullptr || !io->is_input) return not_found("'{}' is not an input of the engine", name);
  if (dtype != io->dtype)
    return invalid_argument("input '{}' is {}, the engine takes {}", name, data_type_name(dtype), data_type_name(io->dtype));
  return check_shape_in_profile(*io, profile, shape);
}

ArrayReadOptions Engine::input_read_options(size_t profile) const {
  ArrayReadOptions options;
  options.only.emplace();
  uint64_t most = 0;
  for (const IoTensor& t : io_table().tensors) {
    if (!t.is_input) continue;
    options.only->insert(t.name);
    const auto bytes = profile < t.profiles.size() ? t.profiles[profile].max.byte_size(t.dtype) : Result<int64_t>(0);
    const uint64_t input_most = bytes.is_ok() ? static_cast<uint64_t>(*bytes) : UINT64_MAX;
    most = input_most > UINT64_MAX - most ? UINT64_MAX : most + input_most;
  }
  options.max_total_bytes = most;
  options.check = [engine = *this, profile](const std::string& name, DataType dtype, const Dims& shape) {
    return engine.check_input(name, dtype, shape, profile);
  };
  return options;
}

// Engine::Impl is private to engine.cpp; executions reach the I/O table and the memory check
// through these accessors.
const IoTable& engine_io_table(const Engine::Impl& impl);
// Ok when the activations of the engine's network for `input_shapes` fit its memory limit
// (engine_validation.h): checked before a backend allocates anything for them.
Status check_activation_memory(const Engine::Impl& impl, const std::map<std::string, Dims>& input_shapes);

Status Execution::set_input_shape(const std::string& name, const Dims& shape) { return set_input_shapes({{name, shape}}); }

Status Execution::set_input_shapes(const std::map<std::string, Dims>& shapes) {
  const IoTable& table = engine_io_table(*engine_);
  for (const auto& [name, shape] : shapes) {
    const IoTensor* io = find_io(table, name);
    if (io == nullptr || !io->is_input) return not_found("set_input_shape: '{}' is not an input of the engine", name);
    TO_RETURN_IF_ERROR(check_shape_in_profile(*io, profile_, shape));
  }
  std::map<std::string, Dims> inputs = input_shapes_;
  for (const auto& [name, shape] : shapes) inputs[name] = shape;
  // Outputs are known once every input has a shape (create_execution sets them all to opt).
  bool all_set = true;
  for (const IoTensor& t : table.tensors)
    if (t.is_input && inputs.count(t.name) == 0) all_set = false;
  if (all_set) {
    TO_ASSIGN_OR_RETURN_CONTEXT(auto outputs, backend_->output_shapes(inputs), shapes_text(shapes));
    TO_RETURN_IF_ERROR(check_activation_memory(*engine_, inputs).with_context(shapes_text(inputs)));
    output_shapes_ = std::move(outputs);
  }
  input_shapes_ = std::move(inputs);
  return Status::ok();
}

Result<Dims> Execution::tensor_shape(const std::string& name) const {
  if (auto it = input_shapes_.find(name); it != input_shapes_.end()) return it->second;
  if (auto it = output_shapes_.find(name); it != output_shapes_.end()) return it->second;
  return not_found("tensor_shape: '{}' is not an input or output of the engine", name);
}

Status Execution::bind(const std::string& name, void* address) {
  if (find_io(engine_io_table(*engine_), name) == nullptr) return not_found("bind: '{}' is not an input or output of the engine", name);
  if (address == nullptr) return invalid_argument("bind: the buffer for '{}' is null", name);
  bindings_[name] = address;
  return Status::ok();
}

Status Execution::enqueue(void* stream) {
  std::string unbound;
  for (const IoTensor& t : engine_io_table(*engine_).tensors)
    if (bindings_.count(t.name) == 0) unbound += (unbound.empty() ? "'" : ", '") + t.name + "'";
  if (!unbound.empty()) return invalid_argument("enqueue: no buffer bound for {}", unbound);
  return backend_->enqueue(input_shapes_, bindings_, output_shapes_, stream);
}

bool Execution::last_enqueue_used_graph() const { return backend_->last_enqueue_used_graph(); }

Result<NamedArrays> Execution::run_on_host(const NamedArrayViews& inputs) {
  const IoTable& table = engine_io_table(*engine_);
  std::map<std::string, Dims> shapes;  // set together: inputs may share dims (a batch)
  for (const IoTensor& t : table.tensors) {
    if (!t.is_input) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end()) return invalid_argument("run_on_host: no array for input '{}'", t.name);
    if (it->second.dtype != t.dtype)
      return invalid_argument("run_on_host: input '{}' is {}, the engine takes {}", t.name, data_type_name(it->second.dtype),
                              data_type_name(t.dtype));
    shapes[t.name] = it->second.shape;
  }
  TO_RETURN_IF_ERROR(set_input_shapes(shapes));
  return backend_->run_on_host(input_shapes_, inputs, output_shapes_, table);
}

Result<std::vector<LayerTiming>> Execution::profile_layers(void* stream, int iterations) {
  if (iterations < 1) return invalid_argument("profile_layers: iterations must be at least 1, got {}", iterations);
  return backend_->profile_layers(input_shapes_, bindings_, stream, iterations);
}

}  // namespace tensoracle
