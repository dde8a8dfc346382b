#include "backends/cuda/plan_json.h"

#include "core/errors.h"
#include "io/strict_json.h"

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

Result<ReplayChoices> recorded_choices(std::string_view plan_json, const std::string& source) {
  const std::string where = fmt::format("tactic record '{}', plan", source);
  TO_ASSIGN_OR_RETURN(const json doc, parse_strict_json(plan_json, where));
  const JsonField plan(doc, where);
  TO_ASSIGN_OR_RETURN(const JsonField layers, plan.member("layers"));
  TO_ASSIGN_OR_RETURN(const size_t count, layers.array_size());
  ReplayChoices out;
  for (size_t i = 0; i < count; ++i) {
    const JsonField layer = layers.element(i);
    TO_ASSIGN_OR_RETURN(std::string name, layer.get_name("name"));
    TO_ASSIGN_OR_RETURN(std::string family, layer.get_name("family"));
    TO_ASSIGN_OR_RETURN(const JsonField choice, layer.member("choice"));
    out[std::move(name)] = {std::move(family), choice.json()};
  }
  return out;
}

}  // namespace tensoracle::backends::cuda
