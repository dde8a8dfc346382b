// Text and JSON listings of a network (network.h), in definition order with names.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tensoracle/network.h"

namespace tensoracle {

namespace {

nlohmann::json attribute_json(const AttributeValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

nlohmann::json tensor_json(const Network& net, Tensor t) {
  const TensorInfo& info = net.tensor(t);
  return {{"name", info.name}, {"dtype", std::string(data_type_name(info.desc.dtype))}, {"shape", info.desc.shape.values()}};
}

}  // namespace

std::string to_text(const Network& net) {
  std::string out;
  for (Tensor t : net.inputs())
    out += fmt::format("input  {} : {}\n", net.tensor(t).name, net.tensor(t).desc.to_string());
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    std::vector<std::string> attrs, ins, outs;
    for (const auto& [key, value] : node.attribute_map()) attrs.push_back(key + "=" + attribute_to_string(value));
    for (Tensor t : node.inputs) ins.push_back(t.valid() ? net.tensor(t).name : "-");
    for (Tensor t : node.outputs) outs.push_back(net.tensor(t).name + " : " + net.tensor(t).desc.to_string());
    std::string extra = node.constant && !node.constant->source.empty() ? " from " + node.constant->source : "";
    out += fmt::format("layer  {} = {}({}) [{}]{} -> {}\n", node.name, op_kind_name(node.kind), fmt::join(ins, ", "),
                       fmt::join(attrs, ", "), extra, fmt::join(outs, ", "));
  }
  for (Tensor t : net.outputs())
    out += fmt::format("output {} : {}\n", net.tensor(t).name, net.tensor(t).desc.to_string());
  return out;
}

std::string to_json(const Network& net, int indent) {
  nlohmann::json doc;
  doc["inputs"] = nlohmann::json::array();
  for (Tensor t : net.inputs()) doc["inputs"].push_back(tensor_json(net, t));
  doc["layers"] = nlohmann::json::array();
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    nlohmann::json layer{{"name", node.name}, {"kind", std::string(op_kind_name(node.kind))}};
    layer["attributes"] = nlohmann::json::object();
    for (const auto& [key, value] : node.attribute_map()) layer["attributes"][key] = attribute_json(value);
    layer["inputs"] = nlohmann::json::array();
    for (Tensor t : node.inputs) layer["inputs"].push_back(t.valid() ? nlohmann::json(net.tensor(t).name) : nlohmann::json());
    layer["outputs"] = nlohmann::json::array();
    for (Tensor t : node.outputs) layer["outputs"].push_back(tensor_json(net, t));
    if (node.constant) {
      layer["sha256"] = node.constant->content_sha256;
      if (!node.constant->source.empty()) layer["source"] = node.constant->source;
    }
    doc["layers"].push_back(std::move(layer));
  }
  doc["outputs"] = nlohmann::json::array();
  for (Tensor t : net.outputs()) doc["outputs"].push_back(tensor_json(net, t));
  return doc.dump(indent);
}

}  // namespace tensoracle
