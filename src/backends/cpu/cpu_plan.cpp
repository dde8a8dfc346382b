// Serializing and restoring the CPU backend's engine plan (cpu_plan.h).
#include "backends/cpu/cpu_plan.h"

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "backends/plan_network.h"
#include "graph/liveness.h"
#include "core/errors.h"
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

Result<Network> restore_cpu_plan(std::string_view plan_json, const BlobLookup& blobs) {
  json doc = json::parse(plan_json.begin(), plan_json.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return corrupt_data("cpu plan: not a JSON object");
  if (doc.value("backend", std::string()) != "cpu") return corrupt_data("cpu plan: backend is not \"cpu\"");
  if (doc.value("plan_version", 0) != kCpuPlanVersion)
    return unsupported("cpu plan: version {} (this build reads {})", doc.value("plan_version", 0), kCpuPlanVersion);
  return restore_network(doc, blobs, "cpu plan");
}

}  // namespace tensoracle::backends::cpu
