// Every section of an engine checked against the others (engine_validation.h).
#include "engine/engine_validation.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "backends/plan_network.h"
#include "backends/registry.h"
#include "core/errors.h"
#include "core/quoted.h"
#include "io/strict_json.h"
#include "tensoracle/byte_size.h"

namespace tensoracle {
namespace {

// Generous caps on counts; real networks have thousands of layers, not millions.
constexpr size_t kMaxLayers = size_t{1} << 20;
constexpr size_t kMaxLayerTensors = size_t{1} << 16;  // inputs or outputs of one layer (a concat)
constexpr size_t kMaxAttributeText = 4096;

// ---- the plan's network JSON, bounded before the network is rebuilt from it ----

// A recorded shape: each dim in [-1, kMaxDimension], the known ones at most kMaxTensorElements
// together (no tensor may hold more), so inference multiplying dims stays inside int64.
Status check_dims(const JsonField& field) {
  TO_ASSIGN_OR_RETURN(const size_t rank, field.array_size(Dims::kMaxRank));
  int64_t elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    TO_ASSIGN_OR_RETURN(const int64_t dim, field.element(d).as_int(-1, kMaxDimension));
    if (dim > 0 && elements > kMaxTensorElements / dim)
      return field.error("has more than the limit of {} elements", kMaxTensorElements);
    if (dim > 0) elements *= dim;
  }
  return Status::ok();
}

Status check_tensor_json(const JsonField& tensor) {
  TO_RETURN_IF_ERROR(tensor.allow_keys({"name", "dtype", "shape"}));
  TO_RETURN_IF_ERROR(tensor.get_name("name").status());
  TO_RETURN_IF_ERROR(tensor.get_string("dtype").status());
  TO_ASSIGN_OR_RETURN(const JsonField shape, tensor.member("shape"));
  return check_dims(shape);
}

// Any attribute value: numbers within int32 range when integral, bounded text and lists, and the
// non-zero integers of a list (a shape, sizes, padding) multiplying to at most 2^62 in magnitude.
Status check_attribute(const JsonField& value) {
  const nlohmann::json& json = value.json();
  if (json.is_number_integer()) return value.as_int(-kMaxAttributeMagnitude, kMaxAttributeMagnitude).status();
  if (json.is_string() && json.get_ref<const std::string&>().size() > kMaxAttributeText)
    return value.error("holds {} bytes of text, more than the limit {}", json.get_ref<const std::string&>().size(),
                       kMaxAttributeText);
  if (json.is_array()) {
    TO_ASSIGN_OR_RETURN(const size_t count, value.array_size(kMaxAttributeElements));
    constexpr int64_t kMaxProduct = int64_t{1} << 62;
    int64_t product = 1;
    for (size_t i = 0; i < count; ++i) {
      const JsonField element = value.element(i);
      TO_RETURN_IF_ERROR(check_attribute(element));
      if (!element.json().is_number_integer()) continue;
      const int64_t magnitude = std::abs(element.json().get<int64_t>());  // within int32: no overflow
      if (magnitude > 1 && product > kMaxProduct / magnitude)
        return value.error("holds integers whose product exceeds 2^62");
      if (magnitude > 1) product *= magnitude;
    }
  }
  if (json.is_object()) {
    if (json.size() > kMaxAttributeElements)
      return value.error("has {} members, more than the limit {}", json.size(), kMaxAttributeElements);
    for (const auto& item : json.items()) {
      TO_ASSIGN_OR_RETURN(const JsonField member, value.member(item.key()));
      TO_RETURN_IF_ERROR(check_attribute(member));
    }
  }
  return Status::ok();  // booleans, null and floating-point numbers (always finite) are bounded
}

Status check_layer_json(const JsonField& layer) {
  TO_RETURN_IF_ERROR(layer.allow_keys({"name", "kind", "attributes", "inputs", "outputs", "sha256", "source"}));
  TO_RETURN_IF_ERROR(layer.get_name("name").status());
  TO_RETURN_IF_ERROR(layer.get_string("kind").status());
  TO_ASSIGN_OR_RETURN(const JsonField attributes, layer.member("attributes"));
  TO_RETURN_IF_ERROR(attributes.require_object());
  TO_RETURN_IF_ERROR(check_attribute(attributes));
  TO_ASSIGN_OR_RETURN(const JsonField inputs, layer.member("inputs"));
  TO_ASSIGN_OR_RETURN(const size_t input_count, inputs.array_size(kMaxLayerTensors));
  for (size_t i = 0; i < input_count; ++i)
    if (!inputs.element(i).is_null()) TO_RETURN_IF_ERROR(inputs.element(i).as_name().status());
  TO_ASSIGN_OR_RETURN(const JsonField outputs, layer.member("outputs"));
  TO_ASSIGN_OR_RETURN(const size_t output_count, outputs.array_size(kMaxLayerTensors));
  for (size_t i = 0; i < output_count; ++i) TO_RETURN_IF_ERROR(check_tensor_json(outputs.element(i)));
  for (const char* key : {"sha256", "source"}) {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> text, layer.optional_member(key));
    if (text) TO_RETURN_IF_ERROR(text->as_string().status());
  }
  return Status::ok();
}

Status check_network_json(const JsonField& network) {
  TO_RETURN_IF_ERROR(network.allow_keys({"inputs", "layers", "outputs"}));
  for (const char* list : {"inputs", "outputs"}) {
    TO_ASSIGN_OR_RETURN(const JsonField tensors, network.member(list));
    TO_ASSIGN_OR_RETURN(const size_t count, tensors.array_size(kMaxLayerTensors));
    for (size_t i = 0; i < count; ++i) TO_RETURN_IF_ERROR(check_tensor_json(tensors.element(i)));
  }
  TO_ASSIGN_OR_RETURN(const JsonField layers, network.member("layers"));
  TO_ASSIGN_OR_RETURN(const size_t count, layers.array_size(kMaxLayers));
  for (size_t i = 0; i < count; ++i) TO_RETURN_IF_ERROR(check_layer_json(layers.element(i)));
  return Status::ok();
}

// ---- the I/O table against the network ----

std::string tensor_list(const Network& network, const std::vector<Tensor>& tensors) {
  std::string out;
  for (Tensor t : tensors) out += (out.empty() ? "" : ", ") + quote(network.tensor(t).name);
  return out.empty() ? "none" : out;
}

std::string io_list(const IoTable& table, bool inputs) {
  std::string out;
  for (const IoTensor& t : table.tensors)
    if (t.is_input == inputs) out += (out.empty() ? "" : ", ") + quote(t.name);
  return out.empty() ? "none" : out;
}

// The I/O table's inputs (or outputs) are the network's, in order, with its types and format.
Status check_io_tensors(const IoTable& table, const Network& network, bool inputs) {
  const std::vector<Tensor>& tensors = inputs ? network.inputs() : network.outputs();
  const char* role = inputs ? "input" : "output";
  std::vector<const IoTensor*> io;
  for (const IoTensor& t : table.tensors)
    if (t.is_input == inputs) io.push_back(&t);
  if (io.size() != tensors.size())
    return corrupt_data("the I/O table has {} {}s ({}), the plan's network {} ({})", io.size(), role,
                        io_list(table, inputs), tensors.size(), tensor_list(network, tensors));
  for (size_t i = 0; i < io.size(); ++i) {
    const TensorInfo& info = network.tensor(tensors[i]);
    if (io[i]->name != info.name)
      return corrupt_data("{} {} is {} in the I/O table, {} in the plan's network", role, i, quote(io[i]->name),
                          quote(info.name));
    if (io[i]->dtype != info.desc.dtype)
      return corrupt_data("{} {} is {} in the I/O table, {} in the plan's network", role, quote(info.name),
                          data_type_name(io[i]->dtype), data_type_name(info.desc.dtype));
    if (io[i]->format != TensorFormat::kLinear)
      return corrupt_data("{} {} has format {} in the I/O table; the plan binds every input and output LINEAR", role,
                          quote(info.name), tensor_format_name(io[i]->format));
    for (size_t p = 0; p < io[i]->profiles.size(); ++p) {
      const ShapeRange& range = io[i]->profiles[p];
      for (const Dims* shape : {&range.min, &range.opt, &range.max}) {
        if (shape->rank() != info.desc.shape.rank())
          return corrupt_data("{} {}, profile {}: shape {} in the I/O table has rank {}, the plan's network has {}", role,
                              quote(info.name), p, shape->to_string(), shape->rank(), info.desc.to_string());
        if (!inputs) continue;
        for (size_t d = 0; d < shape->rank(); ++d) {
          if ((*shape)[d] > kMaxDimension)
            return corrupt_data("input {}, profile {}: dimension {} is {}, more than the limit {}", quote(info.name), p, d,
                                (*shape)[d], kMaxDimension);
          if (d + 1 == shape->rank()) {
            auto elements = shape->element_count();
            if (!elements.is_ok() || *elements > kMaxTensorElements)
              return corrupt_data("input {}, profile {}: shape {} has more than the limit of {} elements",
                                  quote(info.name), p, shape->to_string(), kMaxTensorElements);
          }
          if (info.desc.shape[d] >= 0 && (*shape)[d] != info.desc.shape[d])
            return corrupt_data("input {}, profile {}: the I/O table allows {} where the plan's network fixes dimension {} "
                                "to {}",
                                quote(info.name), p, shape->to_string(), d, info.desc.shape[d]);
        }
      }
    }
  }
  return Status::ok();
}

// Shape inference at one profile point: every tensor bounded, the outputs as the I/O table says.
Result<uint64_t> check_profile_point(const Network& network, const IoTable& table, size_t profile, int point) {
  static const char* const kPoint[3] = {"min", "opt", "max"};
  const auto shape_of = [&](const ShapeRange& range) -> const Dims& {
    return point == 0 ? range.min : point == 1 ? range.opt : range.max;
  };
  const std::string where = fmt::format("profile {} at its {} shapes", profile, kPoint[point]);
  std::map<std::string, Dims> inputs;
  for (const IoTensor& t : table.tensors)
    if (t.is_input) inputs[t.name] = shape_of(t.profiles[profile]);
  auto inferred = backends::infer_tensor_descs(network, inputs);
  if (!inferred.is_ok())
    return Status(StatusCode::kCorruptData, fmt::format("{}: the plan's network fails shape inference: {}", where,
                                                        inferred.status().message()));
  for (size_t t = 0; t < inferred->size(); ++t) {
    const Dims& shape = (*inferred)[t].shape;
    int64_t elements = 1;
    for (const int64_t dim : shape) {
      const auto product = dim < 0 ? std::optional<int64_t>(elements) : checked_mul(elements, dim);
      if (!product || *product > kMaxTensorElements)
        return corrupt_data("{}: tensor {} has shape {}, more than the limit of {} elements", where,
                            quote(network.tensor(Tensor{static_cast<uint32_t>(t)}).name), shape.to_string(),
                            kMaxTensorElements);
      elements = *product;
    }
  }
  for (const IoTensor& t : table.tensors) {
    if (t.is_input) continue;
    TO_ASSIGN_OR_RETURN(const Tensor tensor, network.find_tensor(t.name));
    const Dims& expected = shape_of(t.profiles[profile]);
    if ((*inferred)[tensor.id].shape != expected)
      return corrupt_data("{}: output {} is {} in the I/O table, but the plan's network computes {}", where, quote(t.name),
                          expected.to_string(), (*inferred)[tensor.id].shape.to_string());
  }
  return peak_activation_bytes(network, inputs);
}

// The constants table names a blob for each constant; every blob of the engine is one of them.
Status check_blobs_are_constants(const EngineFile& file, const JsonField& plan, const Network& network) {
  TO_ASSIGN_OR_RETURN(const JsonField constants, plan.member("constants"));
  std::set<std::string> used;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (node.kind != OpKind::kConstant || !node.constant) continue;
    TO_ASSIGN_OR_RETURN(const JsonField entry, constants.member(node.constant->content_sha256));
    TO_ASSIGN_OR_RETURN(std::string blob, entry.get_name("blob"));
    used.insert(std::move(blob));
  }
  for (const EngineBlobInfo& blob : file.blobs())
    if (used.count(blob.name) == 0)
      return corrupt_data("blob {} ({} bytes) is not a constant of the plan's network", quote(blob.name), blob.size);
  return Status::ok();
}

// Every plugin layer of the plan's network names a plugin of the engine's record of what it needs.
Status check_plugin_layers(const EngineFile& file, const Network& network) {
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    const auto* attrs = node.attributes<PluginAttributes>();
    if (attrs == nullptr) continue;
    const auto& needed = file.required_plugins();
    const bool recorded = std::any_of(needed.begin(), needed.end(), [&](const PluginFingerprint& p) {
      return p.name == attrs->plugin && p.version == attrs->version;
    });
    if (!recorded)
      return corrupt_data("engine '{}': layer '{}' uses plugin '{}' version {}, which the engine's environment section "
                          "does not list among the plugins it needs",
                          file.label(), node.name, attrs->plugin, attrs->version);
  }
  return Status::ok();
}

Result<ValidatedEngine> validate(const EngineFile& file, const PluginRegistry& plugins) {
  const std::string source = fmt::format("engine '{}', plan", file.label());
  ValidatedEngine out;
  TO_ASSIGN_OR_RETURN(out.plan.json, parse_strict_json(file.plan().as_string_view(), source));
  const JsonField plan(out.plan.json, source);
  TO_RETURN_IF_ERROR(plan.require_object());
  TO_ASSIGN_OR_RETURN(const JsonField backend, plan.member("backend"));
  TO_ASSIGN_OR_RETURN(const std::string backend_name, backend.as_string());
  if (backend_name != file.environment().backend)
    return backend.error("the plan is for backend {}, the environment says the engine was built by {}",
                         quote(backend_name), quote(file.environment().backend));
  TO_ASSIGN_OR_RETURN(const JsonField network_json, plan.member("network"));
  TO_RETURN_IF_ERROR(check_network_json(network_json));
  auto network = backends::restore_network(plan, backends::engine_blobs(file));
  if (!network.is_ok()) {
    // Inference and definition errors of the rebuilt network are invalid_argument for a user's
    // graph; in an engine file they mean the file is corrupt. Running out of memory stays itself.
    const StatusCode code = network.status().code() == StatusCode::kFailedPrecondition ? StatusCode::kFailedPrecondition
                                                                                        : StatusCode::kCorruptData;
    return Status(code, network.status().message());
  }
  network->set_plugins(plugins);
  out.plan.network = std::make_shared<const Network>(*std::move(network));
  const Network& net = *out.plan.network;
  TO_RETURN_IF_ERROR(check_plugin_layers(file, net));
  TO_RETURN_IF_ERROR(check_blobs_are_constants(file, plan, net).with_context(fmt::format("engine '{}'", file.label())));

  const IoTable& table = file.io_table();
  const std::string engine = fmt::format("engine '{}'", file.label());
  if (net.outputs().empty()) return corrupt_data("{}: the plan's network has no outputs", engine);
  TO_RETURN_IF_ERROR(check_io_tensors(table, net, true).with_context(engine));
  TO_RETURN_IF_ERROR(check_io_tensors(table, net, false).with_context(engine));
  out.limit = activation_limit(file.environment());
  const size_t profiles = table.tensors.empty() ? 0 : table.tensors.front().profiles.size();
  if (profiles == 0) return corrupt_data("{}: the I/O table declares no optimization profile", engine);
  for (size_t p = 0; p < profiles; ++p) {
    uint64_t at[3] = {};
    for (int point = 0; point < 3; ++point) {
      auto bytes = check_profile_point(net, table, p, point);
      if (!bytes.is_ok()) return Status(StatusCode::kCorruptData, engine + ": " + bytes.status().message());
      at[point] = *bytes;
    }
    if (at[0] > out.limit.bytes)
      return corrupt_data("{}: profile {} needs {} ({} bytes) of activation memory at its smallest input shapes, more "
                          "than the {} of {}",
                          engine, p, format_byte_size(at[0]), at[0], format_byte_size(out.limit.bytes), out.limit.source);
    out.min_activation_bytes.push_back(at[0]);
    out.max_activation_bytes.push_back(at[2]);
  }
  return out;
}

}  // namespace

Result<ValidatedEngine> validate_engine(const EngineFile& file, const PluginRegistry& plugins) {
  try {
    return validate(file, plugins);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kFailedPrecondition, "engine '{}': out of memory validating the engine", file.label());
  }
}

Status check_engine_file(const EngineFile& file) {
  TO_ASSIGN_OR_RETURN(const ValidatedEngine validated, validate_engine(file));
  // An engine of a backend this build lacks is checked as far as the engine layer goes; it cannot
  // run here anyway, and Engine::from_file says so.
  auto backend = backends::create_backend(file.environment().backend);
  if (!backend.is_ok()) return Status::ok();
  return (*backend)->check_plan(file, validated.plan);
}

}  // namespace tensoracle
