// network_from_json: the inverse of to_json (network.h).
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "io/strict_json.h"
#include "tensoracle/network.h"

namespace tensoracle {

namespace {

using nlohmann::json;

Result<AttributeValue> attribute_from_json(const std::string& key, const json& v) {
  if (v.is_boolean()) return AttributeValue(v.get<bool>());
  if (v.is_number_integer()) return AttributeValue(v.get<int64_t>());
  if (v.is_number()) return AttributeValue(v.get<double>());
  if (v.is_string()) return AttributeValue(v.get<std::string>());
  if (v.is_array()) {
    bool any_float = false;
    for (const json& e : v) {
      if (!e.is_number()) return invalid_argument("attribute '{}': list elements must be numbers", key);
      any_float |= e.is_number_float();
    }
    if (any_float) return AttributeValue(v.get<std::vector<double>>());
    return AttributeValue(v.get<std::vector<int64_t>>());
  }
  return invalid_argument("attribute '{}': unsupported JSON value {}", key, v.dump());
}

Result<TensorDesc> desc_from_json(const json& t) {
  TO_ASSIGN_OR_RETURN(DataType type, parse_data_type(t.at("dtype").get<std::string>()));
  return TensorDesc{type, Dims(t.at("shape").get<std::vector<int64_t>>())};
}

Result<Network> build(const json& doc, const ConstantResolver& constants) {
  Network net;
  for (const json& in : doc.at("inputs")) {
    TO_ASSIGN_OR_RETURN(TensorDesc desc, desc_from_json(in));
    net.add_input(in.at("name").get<std::string>(), desc.dtype, desc.shape);
  }
  for (const json& layer : doc.at("layers")) {
    const std::string name = layer.at("name");
    auto kind = parse_op_kind(layer.at("kind").get<std::string>());
    if (!kind) return invalid_argument("layer '{}': unknown kind {}", name, layer.at("kind").dump());
    std::vector<Tensor> outs;
    if (*kind == OpKind::kConstant) {
      const std::string sha = layer.at("sha256");
      TO_ASSIGN_OR_RETURN(ConstantBytes bytes, constants(name, layer.value("source", std::string()), sha));
      Tensor t = net.add_constant(bytes.view, bytes.owner, name, layer.value("source", std::string()));
      if (!t.valid()) return net.status();
      if (net.node(static_cast<size_t>(net.tensor(t).producer)).constant->content_sha256 != sha)
        return corrupt_data("constant '{}': its bytes do not match the recorded sha256 {}", name, sha);
      outs.push_back(t);
    } else {
      std::vector<Tensor> inputs;
      for (const json& in : layer.at("inputs")) {
        if (in.is_null()) {
          inputs.push_back(Tensor{});
          continue;
        }
        TO_ASSIGN_OR_RETURN(Tensor t, net.find_tensor(in.get<std::string>()));
        inputs.push_back(t);
      }
      AttributeMap attrs;
      for (const auto& [key, value] : layer.at("attributes").items()) {
        TO_ASSIGN_OR_RETURN(attrs[key], attribute_from_json(key, value));
      }
      outs = net.add_layer(*kind, std::move(inputs), std::move(attrs), name);
      TO_RETURN_IF_ERROR(net.status());
    }
    const json& recorded = layer.at("outputs");
    if (recorded.size() != outs.size())
      return invalid_argument("layer '{}': {} outputs recorded, {} inferred", name, recorded.size(), outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      TO_ASSIGN_OR_RETURN(TensorDesc desc, desc_from_json(recorded[i]));
      if (!(desc == net.tensor(outs[i]).desc))
        return invalid_argument("layer '{}': output {} recorded as {} but inferred as {}", name, i, desc.to_string(),
                                net.tensor(outs[i]).desc.to_string());
      net.set_tensor_name(outs[i], recorded[i].at("name").get<std::string>());
    }
    TO_RETURN_IF_ERROR(net.status());
  }
  for (const json& out : doc.at("outputs")) {
    TO_ASSIGN_OR_RETURN(Tensor t, net.find_tensor(out.at("name").get<std::string>()));
    net.mark_output(t);
  }
  TO_RETURN_IF_ERROR(net.status());
  return net;
}

}  // namespace

Result<Network> network_from_json(const std::string& text, const ConstantResolver& constants) {
  TO_ASSIGN_OR_RETURN(const json doc,
                      parse_strict_json(text, "network JSON", kMaxJsonDepth, StatusCode::kInvalidArgument));
  try {
    return build(doc, constants);
  } catch (const json::exception& e) {
    // Missing keys or wrong JSON types: a malformed document, not a bug.
    return invalid_argument("network JSON is malformed: {}", e.what());
  }
}

}  // namespace tensoracle
