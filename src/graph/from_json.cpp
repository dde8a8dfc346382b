// network_from_json: the inverse of to_json (network.h), through the checked JSON fields of
// io/json_field.h, so a malformed document is an error naming the field, never an exception.
#include <limits>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "graph/network_json.h"
#include "io/strict_json.h"

namespace tensoracle::graph {

namespace {

using nlohmann::json;

Result<AttributeValue> attribute_from_json(const JsonField& field) {
  // Each get<> below reads the type just tested: none can throw.
  const json& v = field.json();
  if (v.is_boolean()) return AttributeValue(v.get<bool>());
  if (v.is_number_integer()) {
    TO_ASSIGN_OR_RETURN(const int64_t value, field.as_int());
    return AttributeValue(value);
  }
  if (v.is_number()) return AttributeValue(v.get<double>());
  if (v.is_string()) return AttributeValue(v.get<std::string>());
  if (v.is_array()) {
    bool any_float = false;
    for (const json& e : v) {
      if (!e.is_number()) return field.error("list elements must be numbers, got {}", field.shown());
      any_float |= e.is_number_float();
      if (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return field.error("list element {} is out of the int64 range", e.get<uint64_t>());
    }
    if (any_float) return AttributeValue(v.get<std::vector<double>>());
    return AttributeValue(v.get<std::vector<int64_t>>());
  }
  return field.error("unsupported attribute value {}", field.shown());
}

Result<TensorDesc> desc_from_json(const JsonField& tensor) {
  TO_ASSIGN_OR_RETURN(const JsonField dtype_field, tensor.member("dtype"));
  TO_ASSIGN_OR_RETURN(const std::string dtype_name, dtype_field.as_string());
  auto dtype = parse_data_type(dtype_name);
  if (!dtype.is_ok()) return dtype_field.error("{}", dtype.status().message());
  TO_ASSIGN_OR_RETURN(Dims shape, tensor.get_dims("shape"));
  return TensorDesc{*dtype, std::move(shape)};
}

// The elements of the array member `key`.
Result<std::vector<JsonField>> elements(const JsonField& object, std::string_view key) {
  TO_ASSIGN_OR_RETURN(const JsonField list, object.member(key));
  TO_ASSIGN_OR_RETURN(const size_t count, list.array_size());
  std::vector<JsonField> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(list.element(i));
  return out;
}

// A network error (definition, inference) at `field`: its own code, prefixed with where it is.
Status located(const JsonField& field, const Status& status) { return status.with_context(field.where()); }

Result<std::vector<Tensor>> add_constant_layer(Network& net, const JsonField& layer, const std::string& name,
                                               const ConstantResolver& constants) {
  TO_ASSIGN_OR_RETURN(const std::string sha, layer.get_string("sha256"));
  std::string source;
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> source_field, layer.optional_member("source"));
  if (source_field) {
    TO_ASSIGN_OR_RETURN(source, source_field->as_string());
  }
  TO_ASSIGN_OR_RETURN(ConstantBytes bytes, constants(name, source, sha));
  Tensor t = net.add_constant(bytes.view, bytes.owner, name, source);
  if (!t.valid()) return located(layer, net.status());
  if (net.node(static_cast<size_t>(net.tensor(t).producer)).constant->content_sha256 != sha)
    return located(layer, corrupt_data("constant '{}': its bytes do not match the recorded sha256 {}", name, sha));
  return std::vector<Tensor>{t};
}

Result<std::vector<Tensor>> add_op_layer(Network& net, const JsonField& layer, OpKind kind, const std::string& name) {
  std::vector<Tensor> inputs;
  TO_ASSIGN_OR_RETURN(const std::vector<JsonField> input_fields, elements(layer, "inputs"));
  for (const JsonField& in : input_fields) {
    if (in.is_null()) {
      inputs.push_back(Tensor{});
      continue;
    }
    TO_ASSIGN_OR_RETURN(const std::string input_name, in.as_string());
    auto t = net.find_tensor(input_name);
    if (!t.is_ok()) return located(in, t.status());
    inputs.push_back(*t);
  }
  TO_ASSIGN_OR_RETURN(const JsonField attributes, layer.member("attributes"));
  TO_RETURN_IF_ERROR(attributes.require_object());
  AttributeMap attrs;
  for (const auto& item : attributes.json().items()) {
    TO_ASSIGN_OR_RETURN(const JsonField value, attributes.member(item.key()));
    TO_ASSIGN_OR_RETURN(attrs[item.key()], attribute_from_json(value));
  }
  std::vector<Tensor> outs = net.add_layer(kind, std::move(inputs), std::move(attrs), name);
  if (!net.status().is_ok()) return located(layer, net.status());
  return outs;
}

Status read_layer(Network& net, const JsonField& layer, const ConstantResolver& constants) {
  TO_ASSIGN_OR_RETURN(const std::string name, layer.get_string("name"));
  TO_ASSIGN_OR_RETURN(const JsonField kind_field, layer.member("kind"));
  TO_ASSIGN_OR_RETURN(const std::string kind_name, kind_field.as_string());
  const std::optional<OpKind> kind = parse_op_kind(kind_name);
  if (!kind) return kind_field.error("layer '{}': unknown kind {}", name, kind_field.shown());
  TO_ASSIGN_OR_RETURN(const std::vector<Tensor> outs, *kind == OpKind::kConstant
                                                          ? add_constant_layer(net, layer, name, constants)
                                                          : add_op_layer(net, layer, *kind, name));
  TO_ASSIGN_OR_RETURN(const std::vector<JsonField> recorded, elements(layer, "outputs"));
  if (recorded.size() != outs.size())
    return layer.error("layer '{}': {} outputs recorded, {} inferred", name, recorded.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    TO_ASSIGN_OR_RETURN(const TensorDesc desc, desc_from_json(recorded[i]));
    if (!(desc == net.tensor(outs[i]).desc))
      return recorded[i].error("layer '{}': output {} recorded as {} but inferred as {}", name, i, desc.to_string(),
                               net.tensor(outs[i]).desc.to_string());
    TO_ASSIGN_OR_RETURN(const std::string output_name, recorded[i].get_string("name"));
    net.set_tensor_name(outs[i], output_name);
  }
  if (!net.status().is_ok()) return located(layer, net.status());
  return Status::ok();
}

}  // namespace

Result<Network> network_from_json_field(const JsonField& network, const ConstantResolver& constants) {
  Network net;
  TO_ASSIGN_OR_RETURN(const std::vector<JsonField> inputs, elements(network, "inputs"));
  for (const JsonField& in : inputs) {
    TO_ASSIGN_OR_RETURN(const TensorDesc desc, desc_from_json(in));
    TO_ASSIGN_OR_RETURN(const std::string name, in.get_string("name"));
    net.add_input(name, desc.dtype, desc.shape);
  }
  TO_ASSIGN_OR_RETURN(const std::vector<JsonField> layers, elements(network, "layers"));
  for (const JsonField& layer : layers) TO_RETURN_IF_ERROR(read_layer(net, layer, constants));
  TO_ASSIGN_OR_RETURN(const std::vector<JsonField> outputs, elements(network, "outputs"));
  for (const JsonField& out : outputs) {
    TO_ASSIGN_OR_RETURN(const std::string name, out.get_string("name"));
    auto t = net.find_tensor(name);
    if (!t.is_ok()) return located(out, t.status());
    net.mark_output(*t);
  }
  if (!net.status().is_ok()) return located(network, net.status());
  return net;
}

}  // namespace tensoracle::graph

namespace tensoracle {

Result<Network> network_from_json(const std::string& text, const ConstantResolver& constants) {
  TO_ASSIGN_OR_RETURN(const nlohmann::json doc,
                      parse_strict_json(text, "network JSON", kMaxJsonDepth, StatusCode::kInvalidArgument));
  return graph::network_from_json_field(JsonField(doc, "network JSON", StatusCode::kInvalidArgument), constants);
}

}  // namespace tensoracle
