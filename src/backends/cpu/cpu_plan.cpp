// Serializing and restoring the CPU backend's engine plan (cpu_plan.h).
#include "backends/cpu/cpu_plan.h"

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/plugin_kernel.h"
#include "backends/plan_network.h"
#include "graph/liveness.h"
#include "core/errors.h"
#include "core/quoted.h"
#include "io/json_field.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cpu {

namespace {

using nlohmann::json;

constexpr const char* kTactic = "cpu.reference";

json tensor_ref(const Network& network, Tensor t) {
  const TensorInfo& info = network.tensor(t);
  return json{{"name", info.name}, {"dtype", std::string(data_type_name(info.desc.dtype))}, {"shape", info.desc.shape.values()}};
}

}  // namespace

Result<BackendPlan> make_cpu_plan(const Network& network, const std::map<std::string, Dims>& opt_inputs,
                                  const BuildProgressFn& progress) {
  TO_RETURN_IF_ERROR(network.status());
  std::unique_ptr<Backend> backend = make_cpu_backend();
  const std::vector<bool> live = graph::live_nodes(network);
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> opt_desc, infer_tensor_descs(network, opt_inputs));

  NetworkPlan net_plan = plan_network(network);
  BackendPlan plan;
  plan.blobs = std::move(net_plan.blobs);
  const uint64_t weight_bytes = net_plan.weight_bytes;
  json layers = json::array();
  uint64_t activation_bytes = 0;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (node.kind == OpKind::kConstant) continue;
    if (!live[i]) continue;
    TO_RETURN_IF_ERROR(backend->supports(network, i));
    if (progress)
      progress(fmt::format("layer {}/{} {} ({}): tactic {}", i + 1, network.num_nodes(), node.name, op_kind_name(node.kind),
                           kTactic));
    json layer{{"name", node.name},
               {"kind", std::string(op_kind_name(node.kind))},
               {"tactic", kTactic},
               // Strongly typed: the layer's output type is its precision; the reference backend
               // computes in fp64 and rounds to it.
               {"precision", std::string(data_type_name(network.tensor(node.outputs[0]).desc.dtype))},
               {"compute", "fp64"},
               {"graph_layers", json::array({node.name})}};
    layer["inputs"] = json::array();
    for (Tensor t : node.inputs) layer["inputs"].push_back(t.valid() ? json(network.tensor(t).name) : json());
    layer["outputs"] = json::array();
    for (Tensor t : node.outputs) {
      layer["outputs"].push_back(tensor_ref(network, t));
      const TensorDesc& d = opt_desc[t.id];
      if (d.shape.is_static()) {
        auto bytes = d.shape.byte_size(d.dtype);
        if (bytes.is_ok()) activation_bytes += static_cast<uint64_t>(*bytes);
      }
    }
    if (node.kind == OpKind::kPlugin) {
      TO_ASSIGN_OR_RETURN(const PluginFormats formats, plugin_layer_formats(network, node));
      layer["formats"] = plugin_formats_to_json(formats);
    }
    layers.push_back(std::move(layer));
  }
  json doc{{"backend", "cpu"},
           {"plan_version", kCpuPlanVersion},
           {"network", std::move(net_plan.network)},
           {"constants", std::move(net_plan.constants)},
           {"layers", std::move(layers)},
           // The reference backend holds each live value as fp64 and frees it after its last use;
           // the sum of all layer outputs at the first profile's opt shapes bounds its memory.
           {"memory", {{"weights_bytes", weight_bytes},
                       {"activations_bytes_at_opt", activation_bytes},
                       {"workspace_bytes", 0}}}};
  plan.json = doc.dump(1);
  return plan;
}

namespace {

// A plugin layer's recorded formats: well-formed always, and those the cpu backend runs it in
// when the network's plugins can make the plugin (without them the engine does not run, and
// opening it names the missing plugin).
Status check_plugin_formats(const JsonField& layer, const Network& network, const Node& node) {
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> field, layer.optional_member("formats"));
  if (node.kind != OpKind::kPlugin) {
    if (field) return field->error("layer {} is a {} layer, not a plugin", quote(node.name), op_kind_name(node.kind));
    return Status::ok();
  }
  if (!field) return layer.error("plugin layer {} records no formats", quote(node.name));
  std::vector<TensorDesc> inputs, outputs;
  for (Tensor t : node.inputs) {
    if (!t.valid()) return layer.error("plugin layer {} has an omitted input", quote(node.name));
    inputs.push_back(network.tensor(t).desc);
  }
  for (Tensor t : node.outputs) outputs.push_back(network.tensor(t).desc);
  TO_ASSIGN_OR_RETURN(const PluginFormats recorded, plugin_formats_from_json(*field, inputs, outputs));
  const auto* attrs = node.attributes<PluginAttributes>();
  TO_ASSERT(attrs != nullptr);
  if (!network.plugins().find(attrs->plugin, attrs->version).is_ok()) return Status::ok();
  TO_ASSIGN_OR_RETURN(const PluginFormats negotiated, plugin_layer_formats(network, node));
  if (recorded != negotiated)
    return field->error("layer {} records formats {}; the cpu backend negotiates {}", quote(node.name),
                        plugin_formats_text(recorded), plugin_formats_text(negotiated));
  return Status::ok();
}

// The plan's "layers" entry of `node`: it says what inspect shows, so it must say the truth.
Status check_layer(const JsonField& layer, const Network& network, const Node& node) {
  TO_RETURN_IF_ERROR(layer.allow_keys(
      {"name", "kind", "tactic", "precision", "compute", "graph_layers", "inputs", "outputs", "formats"}));
  TO_RETURN_IF_ERROR(check_plugin_formats(layer, network, node));
  TO_ASSIGN_OR_RETURN(const JsonField name, layer.member("name"));
  TO_ASSIGN_OR_RETURN(const std::string name_text, name.as_string());
  if (name_text != node.name)
    return name.error("the plan lists layer {} where the network runs {}", quote(name_text), quote(node.name));
  const auto expect_text = [&](const char* key, std::string_view expected) -> Status {
    TO_ASSIGN_OR_RETURN(const JsonField field, layer.member(key));
    TO_ASSIGN_OR_RETURN(const std::string text, field.as_string());
    if (text != expected)
      return field.error("layer {} says {}, the cpu backend runs it as {}", quote(node.name), quote(text), quote(expected));
    return Status::ok();
  };
  TO_RETURN_IF_ERROR(expect_text("kind", op_kind_name(node.kind)));
  TO_RETURN_IF_ERROR(expect_text("tactic", kTactic));
  TO_RETURN_IF_ERROR(expect_text("precision", data_type_name(network.tensor(node.outputs.front()).desc.dtype)));
  TO_RETURN_IF_ERROR(expect_text("compute", "fp64"));
  json inputs = json::array();
  for (Tensor t : node.inputs) inputs.push_back(t.valid() ? json(network.tensor(t).name) : json());
  json outputs = json::array();
  for (Tensor t : node.outputs) outputs.push_back(tensor_ref(network, t));
  const std::pair<const char*, json> lists[] = {
      {"graph_layers", json::array({node.name})}, {"inputs", inputs}, {"outputs", outputs}};
  for (const auto& [key, expected] : lists) {
    TO_ASSIGN_OR_RETURN(const JsonField field, layer.member(key));
    if (field.json() != expected)
      return field.error("layer {} records {}, its network layer has {}", quote(node.name), field.shown(),
                         JsonField(expected, "").shown());
  }
  return Status::ok();
}

}  // namespace

Status check_cpu_plan(const CheckedPlan& plan, const std::string& source) {
  const JsonField doc(plan.json, source);
  TO_RETURN_IF_ERROR(doc.allow_keys({"backend", "plan_version", "network", "constants", "layers", "memory"}));
  TO_ASSIGN_OR_RETURN(const JsonField version, doc.member("plan_version"));
  TO_ASSIGN_OR_RETURN(const int64_t version_number, version.as_int());
  if (version_number != kCpuPlanVersion)
    return unsupported("{}: cpu plan version {} (this build reads {}; rebuild the engine)", source, version_number,
                       kCpuPlanVersion);
  const Network& network = *plan.network;
  // One entry per live layer, in network order.
  TO_ASSIGN_OR_RETURN(const JsonField layers, doc.member("layers"));
  TO_ASSIGN_OR_RETURN(const size_t count, layers.array_size());
  const std::vector<bool> live = graph::live_nodes(network);
  size_t next = 0;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (node.kind == OpKind::kConstant || !live[i]) continue;
    if (next == count) return layers.error("lists {} layers; the network runs more, from {} on", count, quote(node.name));
    TO_RETURN_IF_ERROR(check_layer(layers.element(next++), network, node));
  }
  if (next != count) return layers.error("lists {} layers; the network runs {}", count, next);
  TO_ASSIGN_OR_RETURN(const JsonField memory, doc.member("memory"));
  TO_RETURN_IF_ERROR(memory.allow_keys({"weights_bytes", "activations_bytes_at_opt", "workspace_bytes"}));
  for (const char* key : {"weights_bytes", "activations_bytes_at_opt"}) TO_RETURN_IF_ERROR(memory.get_uint(key).status());
  TO_RETURN_IF_ERROR(memory.get_uint("workspace_bytes", 0).status());
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
