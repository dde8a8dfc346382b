// Network: tensor and node bookkeeping, sticky errors, the generic add_layer every layer method
// goes through, and inspection.
#include <fmt/format.h>

#include "core/errors.h"
#include "graph/network_impl.h"
#include "graph/op_def.h"
#include "tensoracle/hashing.h"
#include "tensoracle/network.h"

namespace tensoracle {

std::string TensorDesc::to_string() const {
  return std::string(data_type_name(dtype)) + shape.to_string();
}

std::string attribute_to_string(const AttributeValue& value) {
  struct Visitor {
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    // Shortest representation that round-trips: exact and canonical.
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(const std::vector<int64_t>& v) const { return fmt::format("[{}]", fmt::join(v, ",")); }
    std::string operator()(const std::vector<double>& v) const { return fmt::format("[{}]", fmt::join(v, ",")); }
  };
  return std::visit(Visitor{}, value);
}

Network::Network() : impl_(std::make_unique<Impl>()) {}
Network::~Network() = default;
Network::Network(const Network& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Network& Network::operator=(const Network& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;

Status Network::status() const { return impl_->status; }

void Network::Impl::fail(Status error) {
  if (status.is_ok()) status = std::move(error);
}

std::string Network::Impl::unique_tensor_name(const std::string& base) {
  if (!tensor_by_name.count(base)) return base;
  for (int n = 1;; ++n) {
    std::string candidate = fmt::format("{}_{}", base, n);
    if (!tensor_by_name.count(candidate)) return candidate;
  }
}

Tensor Network::Impl::new_tensor(std::string name, TensorDesc desc, int64_t producer, int output_index) {
  Tensor t{static_cast<uint32_t>(tensors.size())};
  name = unique_tensor_name(name);
  tensor_by_name[name] = t.id;
  tensors.push_back(TensorInfo{std::move(name), std::move(desc), producer, output_index});
  return t;
}

bool Network::Impl::owns(Tensor t) const { return t.valid() && t.id < tensors.size(); }

Tensor Network::add_input(std::string name, DataType dtype, Dims shape) {
  if (name.empty()) {
    impl_->fail(invalid_argument("network input {}: an input needs a name", impl_->inputs.size()));
    return {};
  }
  if (impl_->tensor_by_name.count(name)) {
    impl_->fail(invalid_argument("network input '{}': a tensor of that name already exists", name));
    return {};
  }
  for (int64_t d : shape)
    if (d < -1) {
      impl_->fail(invalid_argument("network input '{}': dimension {} in {} is invalid (use -1 for dynamic)", name,
                                   d, shape.to_string()));
      return {};
    }
  if (shape.rank() > Dims::kMaxRank) {
    impl_->fail(invalid_argument("network input '{}': rank {} exceeds the maximum {}", name, shape.rank(),
                                 Dims::kMaxRank));
    return {};
  }
  Tensor t = impl_->new_tensor(name, TensorDesc{dtype, std::move(shape)}, -1, 0);
  impl_->inputs.push_back(t);
  return t;
}

namespace {
std::string constant_hash(const ArrayView& view) {
  Sha256 hasher;
  hasher.update(data_type_name(view.dtype));
  hasher.update(view.shape.to_string());
  hasher.update(view.data, view.byte_size());
  return hasher.finish_hex();
}
}  // namespace

Tensor Network::add_constant(const ArrayView& view, std::shared_ptr<const void> owner, std::string name,
                             std::string source) {
  if (!view.shape.is_static() || !view.shape.element_count().is_ok() || (!view.data && view.byte_size() > 0)) {
    impl_->fail(invalid_argument("constant '{}': shape {} must be static with data", name, view.shape.to_string()));
    return {};
  }
  auto data = std::make_shared<ConstantData>();
  data->view = view;
  data->owner = std::move(owner);
  data->content_sha256 = constant_hash(view);
  data->source = std::move(source);
  auto outputs = impl_->add({}, ConstantAttributes().set_dtype(view.dtype).set_shape(view.shape).set_name(std::move(name)));
  if (outputs.empty()) return {};
  impl_->nodes[impl_->tensors[outputs[0].id].producer].constant = std::move(data);
  return outputs[0];
}

Tensor Network::add_constant(HostArray array, std::string name) {
  auto owned = std::make_shared<HostArray>(std::move(array));
  const ArrayView view = owned->view();
  return add_constant(view, std::move(owned), std::move(name));
}

void Network::set_tensor_name(Tensor tensor, std::string name) {
  if (!impl_->owns(tensor)) {
    if (impl_->status.is_ok()) impl_->fail(invalid_argument("naming '{}': not a tensor of this network", name));
    return;
  }
  TensorInfo& info = impl_->tensors[tensor.id];
  if (info.name == name) return;
  if (name.empty() || impl_->tensor_by_name.count(name)) {
    impl_->fail(invalid_argument("renaming tensor '{}' to '{}': the name is empty or already used", info.name, name));
    return;
  }
  impl_->tensor_by_name.erase(info.name);
  impl_->tensor_by_name[name] = tensor.id;
  info.name = std::move(name);
}

void Network::mark_output(Tensor tensor, std::string name) {
  if (!impl_->owns(tensor)) {
    if (impl_->status.is_ok())
      impl_->fail(invalid_argument("mark_output('{}'): not a tensor of this network", name));
    return;
  }
  if (!name.empty()) set_tensor_name(tensor, std::move(name));
  for (Tensor t : impl_->outputs)
    if (t == tensor) return;
  impl_->outputs.push_back(tensor);
}

std::vector<Tensor> Network::add_layer(OpKind kind, std::vector<Tensor> inputs, const AttributeMap& attributes,
                                       std::string name) {
  if (kind == OpKind::kConstant) {
    impl_->fail(invalid_argument("layer '{}': constants are added with add_constant (they need their bytes)", name));
    return {};
  }
  auto typed = attributes_from_map(kind, attributes, name.empty() ? "<unnamed>" : name);
  if (!typed.is_ok()) {
    impl_->fail(typed.status());
    return {};
  }
  std::visit([&](auto& a) { a.name = std::move(name); }, *typed);
  return add_layer(std::move(inputs), *std::move(typed));
}

std::vector<Tensor> Network::add_layer(std::vector<Tensor> inputs, OpAttributes attributes) {
  if (op_kind_of_attributes(attributes) == OpKind::kConstant) {
    impl_->fail(invalid_argument("layer '{}': constants are added with add_constant (they need their bytes)",
                                 std::get<ConstantAttributes>(attributes).name));
    return {};
  }
  return impl_->add(std::move(inputs), std::move(attributes));
}

std::string Network::Impl::generated_name(OpKind kind) {
  std::string name;
  do {
    name = fmt::format("{}_{}", op_kind_name(kind), generated_names[kind]++);
  } while (node_by_name.count(name));
  return name;
}

std::vector<Tensor> Network::Impl::add(std::vector<Tensor> layer_inputs, OpAttributes attributes) {
  const OpKind kind = op_kind_of_attributes(attributes);
  const std::string kind_name(op_kind_name(kind));
  std::string name = std::visit([](const auto& a) { return a.name; }, attributes);
  // After an earlier error an invalid input is that error's consequence: stay quiet.
  for (Tensor t : layer_inputs)
    if (t.valid() && !owns(t)) {
      fail(invalid_argument("layer '{}' ({}): input tensor id {} does not belong to this network",
                               name.empty() ? kind_name : name, kind_name, t.id));
      return {};
    }
  const graph::OpDef* def = graph::find_op_def(kind);
  if (!def) {
    fail(unsupported("layer '{}': op '{}' is not available in this build", name, kind_name));
    return {};
  }
  if (name.empty()) {
    name = generated_name(kind);
  } else if (node_by_name.count(name)) {
    fail(invalid_argument("layer '{}' ({}): a layer of that name already exists", name, kind_name));
    return {};
  }
  const int n = static_cast<int>(layer_inputs.size());
  if (n < def->min_inputs || (def->max_inputs >= 0 && n > def->max_inputs)) {
    fail(invalid_argument("layer '{}' ({}): {} inputs given; expects {} to {}", name, kind_name, n,
                             def->min_inputs, def->max_inputs));
    return {};
  }
  std::visit([&](auto& a) { a.name = name; }, attributes);
  if (Status s = graph::check_enumerations(attributes, name); !s.is_ok()) {
    fail(std::move(s));
    return {};
  }
  if (def->resolve) def->resolve(attributes);
  graph::InferContext ctx{kind, name, attributes, {}, {}};
  for (Tensor t : layer_inputs) {
    ctx.inputs.push_back(t.valid() ? &tensors[t.id].desc : nullptr);
    ctx.input_names.push_back(t.valid() ? tensors[t.id].name : std::string());
  }
  auto inferred = def->infer(ctx);
  if (!inferred.is_ok()) {
    fail(inferred.status());
    return {};
  }
  const int64_t node_index = static_cast<int64_t>(nodes.size());
  Node node;
  node.kind = kind;
  node.name = name;
  node.inputs = std::move(layer_inputs);
  node.op_attributes = std::move(attributes);
  for (size_t i = 0; i < inferred->size(); ++i) {
    std::string tensor_name = inferred->size() == 1 ? name : fmt::format("{}:{}", name, i);
    node.outputs.push_back(new_tensor(std::move(tensor_name), (*inferred)[i], node_index, static_cast<int>(i)));
  }
  node_by_name[name] = static_cast<size_t>(node_index);
  nodes.push_back(std::move(node));
  return nodes.back().outputs;
}

bool Network::Impl::any_invalid(const std::vector<Tensor>& tensors_in) const {
  for (Tensor t : tensors_in)
    if (!t.valid()) return true;
  return false;
}

std::vector<Tensor> Network::Impl::layer(std::vector<Tensor> required, std::vector<Tensor> optional, OpAttributes attrs) {
  if (any_invalid(required)) {
    if (status.is_ok()) {
      const std::string name = std::visit([](const auto& a) { return a.name; }, attrs);
      fail(invalid_argument("layer '{}' ({}): a required input is not a valid tensor", name.empty() ? "<unnamed>" : name,
                            op_kind_name(op_kind_of_attributes(attrs))));
    }
    return {};
  }
  for (Tensor t : optional) required.push_back(t);
  return add(std::move(required), std::move(attrs));
}

Tensor Network::Impl::single(std::vector<Tensor> outputs) { return outputs.empty() ? Tensor{} : outputs[0]; }

size_t Network::num_nodes() const { return impl_->nodes.size(); }
const Node& Network::node(size_t index) const { return impl_->nodes[index]; }
size_t Network::num_tensors() const { return impl_->tensors.size(); }
const TensorInfo& Network::tensor(Tensor tensor) const { return impl_->tensors[tensor.id]; }
const std::vector<Tensor>& Network::inputs() const { return impl_->inputs; }
const std::vector<Tensor>& Network::outputs() const { return impl_->outputs; }

Result<Tensor> Network::find_tensor(const std::string& name) const {
  auto it = impl_->tensor_by_name.find(name);
  if (it == impl_->tensor_by_name.end()) return not_found("no tensor named '{}' in the network", name);
  return Tensor{it->second};
}

Result<size_t> Network::find_node(const std::string& name) const {
  auto it = impl_->node_by_name.find(name);
  if (it == impl_->node_by_name.end()) return not_found("no layer named '{}' in the network", name);
  return it->second;
}

}  // namespace tensoracle
