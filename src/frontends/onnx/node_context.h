// What an op converter sees of one ONNX node: its inputs (network tensors, and their values where
// they are constants at import time), its attributes (each read is recorded: an attribute no
// converter read is refused), and where its outputs go. Every error it makes names the node, its
// op type, domain and opset.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "frontends/onnx/dim_symbols.h"
#include "frontends/onnx/onnx_tensor.h"
#include "frontends/onnx/shape_value.h"
#include "onnx-ml.pb.h"
#include "tensoracle/network.h"

namespace tensoracle::onnx_import {

// An ONNX value during import: a network tensor, a constant known at import time, or both (a
// constant gets its network tensor when a layer first uses it); or a shape value (shape_value.h),
// which never enters the network.
struct Value {
  Tensor tensor;
  std::shared_ptr<const ConstantValue> constant;
  std::string constant_name;  // the layer name of the constant when it enters the network
  std::shared_ptr<const ShapeValue> shape;
};

// The values by ONNX name, shared by every node of a graph.
class ValueTable {
 public:
  // `model` keeps the parsed model (whose bytes constants borrow) alive; `external` reads the
  // tensors stored in external data files.
  ValueTable(Network& net, std::shared_ptr<const void> model, ExternalDataFiles& external)
      : net_(net), model_(std::move(model)), external_(external) {}
  bool contains(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, Value value) { values_[name] = std::move(value); }
  const Value* find(const std::string& name) const;
  // The network tensor of `name` (a constant enters the network here); invalid when unknown.
  Tensor tensor(const std::string& name);
  Network& network() { return net_; }
  const std::shared_ptr<const void>& model() const { return model_; }
  ExternalDataFiles& external() { return external_; }
  DimSymbols& symbols() { return symbols_; }
  // "input 'x' depends on the dynamic dim 'batch' of input 'y'" when `name` is a shape value
  // (the reason a layer cannot read it), else "".
  std::string shape_dependence(const std::string& name) const;

 private:
  Network& net_;
  std::shared_ptr<const void> model_;
  ExternalDataFiles& external_;
  std::map<std::string, Value> values_;
  DimSymbols symbols_;
};

class NodeContext {
 public:
  NodeContext(const onnx::NodeProto& node, std::string node_name, int64_t opset, ValueTable& values);

  Network& net() { return values_.network(); }
  const std::shared_ptr<const void>& model() const { return values_.model(); }
  ExternalDataFiles& external() { return values_.external(); }
  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  // "ONNX node 'conv1' (op Conv, domain ai.onnx, opset 17)".
  const std::string& where() const { return where_; }
  // The layer name of this node's (first) layer: the node's name.
  const std::string& layer_name() const { return name_; }

  // ---- inputs ----
  int num_inputs() const { return node_.input_size(); }
  bool has_input(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  // The network tensor of input i; an error when it is absent.
  Result<Tensor> input(int i);
  // Input i, or an invalid Tensor when it is absent (an optional input); errors like input().
  Result<Tensor> optional_input(int i);
  // The type and shape of `t`; an empty desc for the invalid Tensor a failed layer returns (the
  // network's error then stops the node), so converters may chain layers before checking. A copy:
  // the network's tensor table grows with every layer a converter adds, so a reference into it
  // would dangle.
  TensorDesc desc(Tensor t) {
    return t.valid() && t.id < net().num_tensors() ? net().tensor(t).desc : TensorDesc{};
  }
  // The value of input i when it is known at import time; an error saying the input must be a
  // constant (an initializer or a Constant node) otherwise.
  Result<const ConstantValue*> constant_input(int i);
  Result<std::vector<int64_t>> int_list_input(int i);
  Result<double> scalar_input(int i);
  // The shape value of input i, or nullptr when it is not one.
  const ShapeValue* shape_input(int i) const;
  DimSymbols& symbols() { return values_.symbols(); }

  // ---- attributes (an absent attribute gives the default) ----
  bool has_attribute(const std::string& name);
  Result<int64_t> attribute_int(const std::string& name, int64_t default_value);
  Result<double> attribute_float(const std::string& name, double default_value);
  Result<std::string> attribute_string(const std::string& name, const std::string& default_value);
  Result<std::vector<int64_t>> attribute_ints(const std::string& name);
  Result<const onnx::AttributeProto*> attribute_tensor(const std::string& name);
  // The attribute `name` when present (recorded as read).
  const onnx::AttributeProto* attribute(const std::string& name);
  // The first attribute of the node no converter read, or "".
  std::string unread_attribute() const;

  // ---- outputs ----
  int num_outputs() const { return node_.output_size(); }
  // Binds output i; an absent (empty-named) output is skipped.
  Status set_output(int i, Tensor tensor);
  Status set_constant_output(int i, std::shared_ptr<const ConstantValue> value);
  // Binds output i to `value`, as an int64 constant when every element is constant.
  Status set_shape_output(int i, ShapeValue value);
  // Refuses outputs beyond the first `count` that the model uses (e.g. MaxPool's Indices).
  Status only_outputs(int count);

  // Errors about this node.
  template <typename... Args>
  Status refuse(fmt::format_string<Args...> format, Args&&... args) const {
    return unsupported("{}: {}", where_, fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status invalid(fmt::format_string<Args...> format, Args&&... args) const {
    return invalid_argument("{}: {}", where_, fmt::format(format, std::forward<Args>(args)...));
  }
  // A network definition error after this node's layers, with the node named.
  Status network_status() const;

 private:
  Result<const onnx::AttributeProto*> typed_attribute(const std::string& name, onnx::AttributeProto::AttributeType type);

  const onnx::NodeProto& node_;
  std::string name_;
  int64_t opset_;
  ValueTable& values_;
  std::string where_;
  std::set<std::string> read_;
};

// "ONNX node 'n' (op Relu, domain ai.onnx, opset 17)".
std::string describe_node(const std::string& name, const onnx::NodeProto& node, int64_t opset);

}  // namespace tensoracle::onnx_import
