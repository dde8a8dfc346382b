#include "backends/cuda/plan_json.h"

#include "core/errors.h"

namespace tensoracle::backends::cuda {

using nlohmann::json;

namespace {

json names_of(const Network& net, const std::vector<Tensor>& tensors) {
  json out = json::array();
  for (Tensor t : tensors) out.push_back(t.valid() ? json(net.tensor(t).name) : json());
  return out;
}

json layout_names(const std::vector<Layout>& layouts) {
  json out = json::array();
  for (Layout l : layouts) out.push_back(layout_name(l));
  return out;
}

Result<std::vector<Tensor>> tensors_named(const Network& net, const json& names, const char* what) {
  if (!names.is_array()) return corrupt_data("cuda plan: \"{}\" is not a list", what);
  std::vector<Tensor> out;
  for (const json& n : names) {
    if (n.is_null()) {
      out.push_back(Tensor{});
      continue;
    }
    if (!n.is_string()) return corrupt_data("cuda plan: \"{}\" holds a non-name {}", what, n.dump());
    auto t = net.find_tensor(n.get<std::string>());
    if (!t.is_ok()) return corrupt_data("cuda plan: \"{}\" names '{}', which the network does not have", what, n.get<std::string>());
    out.push_back(*t);
  }
  return out;
}

Result<std::vector<Layout>> layouts_named(const json& names, size_t expected, const char* what) {
  if (!names.is_array() || names.size() != expected)
    return corrupt_data("cuda plan: \"{}\" must list {} layouts", what, expected);
  std::vector<Layout> out;
  for (const json& n : names) {
    const std::string s = n.is_string() ? n.get<std::string>() : std::string();
    if (s == "linear") out.push_back(Layout::kLinear);
    else if (s == "nhwc") out.push_back(Layout::kNhwc);
    else if (s == "bshd") out.push_back(Layout::kBshd);
    else return corrupt_data("cuda plan: unknown layout {} in \"{}\"", n.dump(), what);
  }
  return out;
}

Result<size_t> node_named(const Network& net, const json& name) {
  if (!name.is_string()) return corrupt_data("cuda plan: a step names its layer with {}", name.dump());
  auto index = net.find_node(name.get<std::string>());
  if (!index.is_ok()) return corrupt_data("cuda plan: no layer named '{}' in the network", name.get<std::string>());
  return *index;
}

}  // namespace

SerializedPlan serialize_plan(const CudaPlan& plan) {
  const Network& net = plan.network;
  NetworkPlan net_plan = plan_network(net);
  json layers = json::array();
  for (const PlannedStep& step : plan.steps) {
    json fused = json::array();
    json graph_layers = json::array();
    for (size_t n : step.fused) fused.push_back(net.node(n).name);
    for (size_t n : step.nodes()) graph_layers.push_back(net.node(n).name);
    const Tensor out = step.outputs.front();
    layers.push_back(json{{"name", net.node(step.anchor).name},
                          {"kind", std::string(op_kind_name(net.node(step.anchor).kind))},
                          {"tactic", step.tactic},
                          {"family", step.family},
                          {"choice", step.choice},
                          {"precision", std::string(data_type_name(net.tensor(out).desc.dtype))},
                          {"compute", "fp32"},
                          {"graph_layers", std::move(graph_layers)},
                          {"fused", std::move(fused)},
                          {"inputs", names_of(net, step.inputs)},
                          {"extra_inputs", names_of(net, step.extra_inputs)},
                          {"outputs", names_of(net, step.outputs)},
                          {"input_layouts", layout_names(step.input_layouts)},
                          {"extra_input_layouts", layout_names(step.extra_input_layouts)},
                          {"output_layouts", layout_names(step.output_layouts)},
                          {"build_median_ms", step.time_ms},
                          {"stream", step.stream}});
  }
  json tensors = json::object();
  for (size_t t = 0; t < plan.memory.offsets.size(); ++t)
    if (plan.memory.offsets[t] >= 0)
      tensors[net.tensor(Tensor{static_cast<uint32_t>(t)}).name] = json{{"offset", plan.memory.offsets[t]}, {"bytes", plan.memory.bytes[t]}};
  json doc{{"backend", "cuda"},
           {"plan_version", kCudaPlanVersion},
           {"network", std::move(net_plan.network)},
           {"constants", std::move(net_plan.constants)},
           {"layers", std::move(layers)},
           {"memory", {{"weights_bytes", net_plan.weight_bytes},
                       {"activation_arena_bytes", plan.memory.activation_bytes},
                       {"workspace_bytes", plan.memory.workspace_bytes},
                       {"aux_workspace_bytes", plan.memory.aux_workspace_bytes},
                       {"tensors", std::move(tensors)}}},
           {"build_log", plan.log}};
  return SerializedPlan{doc.dump(1), std::move(net_plan.blobs)};
}

Result<CudaPlan> deserialize_plan(std::string_view plan_json, const BlobLookup& blobs) {
  json doc = json::parse(plan_json.begin(), plan_json.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return corrupt_data("cuda plan: not a JSON object");
  if (doc.value("backend", std::string()) != "cuda") return corrupt_data("cuda plan: backend is not \"cuda\"");
  if (doc.value("plan_version", 0) != kCudaPlanVersion)
    return unsupported("cuda plan: version {} (this build reads {})", doc.value("plan_version", 0), kCudaPlanVersion);
  CudaPlan plan;
  TO_ASSIGN_OR_RETURN(plan.network, restore_network(doc, blobs, "cuda plan"));
  const Network& net = plan.network;
  try {
    for (const json& layer : doc.at("layers")) {
      PlannedStep step;
      TO_ASSIGN_OR_RETURN(step.anchor, node_named(net, layer.at("name")));
      for (const json& n : layer.at("fused")) {
        TO_ASSIGN_OR_RETURN(size_t index, node_named(net, n));
        step.fused.push_back(index);
      }
      TO_ASSIGN_OR_RETURN(step.inputs, tensors_named(net, layer.at("inputs"), "inputs"));
      TO_ASSIGN_OR_RETURN(step.extra_inputs, tensors_named(net, layer.at("extra_inputs"), "extra_inputs"));
      TO_ASSIGN_OR_RETURN(step.outputs, tensors_named(net, layer.at("outputs"), "outputs"));
      if (step.outputs.empty()) return corrupt_data("cuda plan: step '{}' has no output", net.node(step.anchor).name);
      TO_ASSIGN_OR_RETURN(step.input_layouts, layouts_named(layer.at("input_layouts"), step.inputs.size(), "input_layouts"));
      TO_ASSIGN_OR_RETURN(step.extra_input_layouts,
                          layouts_named(layer.at("extra_input_layouts"), step.extra_inputs.size(), "extra_input_layouts"));
      TO_ASSIGN_OR_RETURN(step.output_layouts, layouts_named(layer.at("output_layouts"), step.outputs.size(), "output_layouts"));
      step.family = layer.at("family").get<std::string>();
      step.tactic = layer.at("tactic").get<std::string>();
      step.choice = layer.at("choice");
      step.time_ms = layer.value("build_median_ms", -1.0);
      step.stream = layer.at("stream").get<int>();
      plan.steps.push_back(std::move(step));
    }
    const json& memory = doc.at("memory");
    plan.memory.activation_bytes = memory.at("activation_arena_bytes").get<uint64_t>();
    plan.memory.workspace_bytes = memory.at("workspace_bytes").get<uint64_t>();
    plan.memory.aux_workspace_bytes = memory.at("aux_workspace_bytes").get<uint64_t>();
    plan.memory.offsets.assign(net.num_tensors(), -1);
    plan.memory.bytes.assign(net.num_tensors(), 0);
    for (const auto& [name, slot] : memory.at("tensors").items()) {
      auto t = net.find_tensor(name);
      if (!t.is_ok()) return corrupt_data("cuda plan: the memory plan names '{}', which the network does not have", name);
      const int64_t offset = slot.at("offset").get<int64_t>();
      const uint64_t bytes = slot.at("bytes").get<uint64_t>();
      if (offset < 0 || static_cast<uint64_t>(offset) > plan.memory.activation_bytes ||
          bytes > plan.memory.activation_bytes - static_cast<uint64_t>(offset))
        return corrupt_data("cuda plan: tensor '{}' at offset {} ({} bytes) lies outside the {}-byte arena", name, offset, bytes,
                            plan.memory.activation_bytes);
      plan.memory.offsets[t->id] = offset;
      plan.memory.bytes[t->id] = bytes;
    }
    if (doc.contains("build_log")) plan.log = doc["build_log"].get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    return corrupt_data("cuda plan: {}", e.what());
  }
  return plan;
}

Result<ReplayChoices> recorded_choices(std::string_view plan_json, const std::string& source) {
  const json plan = json::parse(plan_json.begin(), plan_json.end(), nullptr, false);
  if (plan.is_discarded() || !plan.is_object() || !plan.contains("layers") || !plan["layers"].is_array())
    return corrupt_data("tactic record '{}': the plan has no layer list", source);
  ReplayChoices out;
  for (const json& layer : plan["layers"]) {
    if (!layer.is_object() || !layer.contains("name") || !layer.contains("family") || !layer.contains("choice") ||
        !layer["name"].is_string() || !layer["family"].is_string())
      return corrupt_data("tactic record '{}': a layer lacks name, family or choice", source);
    out[layer["name"].get<std::string>()] = {layer["family"].get<std::string>(), layer["choice"]};
  }
  return out;
}

}  // namespace tensoracle::backends::cuda
