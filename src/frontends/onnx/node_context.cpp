// NodeContext and ValueTable (node_context.h).
#include "frontends/onnx/node_context.h"

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {

std::string describe_node(const std::string& name, const onnx::NodeProto& node, int64_t opset) {
  return fmt::format("ONNX node '{}' (op {}, domain {}, opset {})", name, node.op_type(),
                     node.domain().empty() ? "ai.onnx" : node.domain(), opset);
}

const Value* ValueTable::find(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Tensor ValueTable::tensor(const std::string& name) {
  const auto it = values_.find(name);
  if (it == values_.end()) return Tensor{};
  Value& value = it->second;
  if (!value.tensor.valid() && value.constant)
    value.tensor = net_.add_constant(value.constant->view, value.constant->owner, value.constant_name);
  return value.tensor;
}

std::string ValueTable::shape_dependence(const std::string& name) const {
  const Value* value = find(name);
  if (value == nullptr || !value->shape) return "";
  return fmt::format("'{}' depends on the {}, known only at run time", name, symbols_.describe(value->shape->first_symbol()));
}

NodeContext::NodeContext(const onnx::NodeProto& node, std::string node_name, int64_t opset, ValueTable& values)
    : node_(node), name_(std::move(node_name)), opset_(opset), values_(values), where_(describe_node(name_, node, opset)) {}

Result<Tensor> NodeContext::input(int i) {
  if (!has_input(i)) return invalid("input {} is required", i);
  const Tensor t = values_.tensor(node_.input(i));
  if (!t.valid()) {
    TO_RETURN_IF_ERROR(network_status());
    // A shape value has no layer that computes it (the network has no Shape layer).
    if (const std::string why = values_.shape_dependence(node_.input(i)); !why.empty())
      return refuse("input {} {}; computing on it here is not supported", i, why);
    return invalid("input {} '{}' has no value", i, node_.input(i));
  }
  return t;
}

Result<Tensor> NodeContext::optional_input(int i) {
  if (!has_input(i)) return Tensor{};
  return input(i);
}

Result<const ConstantValue*> NodeContext::constant_input(int i) {
  if (!has_input(i)) return invalid("input {} is required", i);
  const Value* value = values_.find(node_.input(i));
  if (const std::string why = values_.shape_dependence(node_.input(i)); !why.empty())
    return refuse("input {} {}; it must be known at import here", i, why);
  if (value == nullptr || !value->constant)
    return refuse("input {} '{}' must be a constant (an initializer or a Constant node); computed values are not "
                  "supported there yet",
                  i, node_.input(i));
  return value->constant.get();
}

const ShapeValue* NodeContext::shape_input(int i) const {
  if (!has_input(i)) return nullptr;
  const Value* value = values_.find(node_.input(i));
  return value == nullptr ? nullptr : value->shape.get();
}

Result<std::vector<int64_t>> NodeContext::int_list_input(int i) {
  TO_ASSIGN_OR_RETURN(const ConstantValue* value, constant_input(i));
  return int_values(*value, fmt::format("{}: input {} '{}'", where_, i, node_.input(i)));
}

Result<double> NodeContext::scalar_input(int i) {
  TO_ASSIGN_OR_RETURN(const ConstantValue* value, constant_input(i));
  return scalar_value(*value, fmt::format("{}: input {} '{}'", where_, i, node_.input(i)));
}

const onnx::AttributeProto* NodeContext::attribute(const std::string& name) {
  for (const onnx::AttributeProto& a : node_.attribute()) {
    if (a.name() == name) {
      read_.insert(name);
      return &a;
    }
  }
  return nullptr;
}

bool NodeContext::has_attribute(const std::string& name) { return attribute(name) != nullptr; }

Result<const onnx::AttributeProto*> NodeContext::typed_attribute(const std::string& name,
                                                                 onnx::AttributeProto::AttributeType type) {
  const onnx::AttributeProto* a = attribute(name);
  if (a == nullptr) return a;
  if (!a->ref_attr_name().empty()) return refuse("attribute '{}' refers to a function attribute; not supported", name);
  if (a->type() != type)
    return invalid("attribute '{}' is of type {}, expected {}", name, onnx::AttributeProto::AttributeType_Name(a->type()),
                   onnx::AttributeProto::AttributeType_Name(type));
  return a;
}

Result<int64_t> NodeContext::attribute_int(const std::string& name, int64_t default_value) {
  TO_ASSIGN_OR_RETURN(const onnx::AttributeProto* a, typed_attribute(name, onnx::AttributeProto::INT));
  return a ? a->i() : default_value;
}

Result<double> NodeContext::attribute_float(const std::string& name, double default_value) {
  TO_ASSIGN_OR_RETURN(const onnx::AttributeProto* a, typed_attribute(name, onnx::AttributeProto::FLOAT));
  return a ? static_cast<double>(a->f()) : default_value;
}

Result<std::string> NodeContext::attribute_string(const std::string& name, const std::string& default_value) {
  TO_ASSIGN_OR_RETURN(const onnx::AttributeProto* a, typed_attribute(name, onnx::AttributeProto::STRING));
  return a ? a->s() : default_value;
}

Result<std::vector<int64_t>> NodeContext::attribute_ints(const std::string& name) {
  TO_ASSIGN_OR_RETURN(const onnx::AttributeProto* a, typed_attribute(name, onnx::AttributeProto::INTS));
  if (a == nullptr) return std::vector<int64_t>{};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Result<const onnx::AttributeProto*> NodeContext::attribute_tensor(const std::string& name) {
  return typed_attribute(name, onnx::AttributeProto::TENSOR);
}

std::string NodeContext::unread_attribute() const {
  for (const onnx::AttributeProto& a : node_.attribute())
    if (read_.count(a.name()) == 0) return a.name();
  return "";
}

Status NodeContext::set_output(int i, Tensor tensor) {
  TO_RETURN_IF_ERROR(network_status());
  if (i >= node_.output_size() || node_.output(i).empty()) return Status::ok();
  values_.set(node_.output(i), Value{tensor, nullptr, "", nullptr});
  return Status::ok();
}

Status NodeContext::set_constant_output(int i, std::shared_ptr<const ConstantValue> value) {
  if (i >= node_.output_size() || node_.output(i).empty()) return Status::ok();
  values_.set(node_.output(i), Value{Tensor{}, std::move(value), name_, nullptr});
  return Status::ok();
}

Status NodeContext::set_shape_output(int i, ShapeValue value) {
  if (i >= node_.output_size() || node_.output(i).empty()) return Status::ok();
  if (!value.is_constant()) {
    values_.set(node_.output(i), Value{Tensor{}, nullptr, "", std::make_shared<const ShapeValue>(std::move(value))});
    return Status::ok();
  }
  const Dims shape = value.scalar ? Dims{} : Dims{static_cast<int64_t>(value.elements.size())};
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(DataType::kInt64, shape));
  for (size_t k = 0; k < value.elements.size(); ++k) array.data_as<int64_t>()[k] = value.elements[k].factor;
  return set_constant_output(i, owned_constant(std::move(array)));
}

Status NodeContext::only_outputs(int count) {
  for (int i = count; i < node_.output_size(); ++i)
    if (!node_.output(i).empty()) return refuse("output {} '{}' is not supported (only the first {})", i, node_.output(i), count);
  return Status::ok();
}

Status NodeContext::network_status() const {
  const Status status = values_.network().status();
  if (status.is_ok()) return status;
  return status.with_context(where_);
}

}  // namespace tensoracle::onnx_import
