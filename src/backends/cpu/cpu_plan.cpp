// Serializing and restoring the CPU backend's engine plan (cpu_plan.h).
#include "backends/cpu/cpu_plan.h"

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "core/errors.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cpu {

namespace {

using nlohmann::json;

constexpr const char* kTactic = "cpu.reference";

std::string blob_name_for(const std::string& sha256) { return "const/" + sha256; }

// Indices of the nodes that contribute to an output.
std::vector<bool> live_nodes(const Network& network) {
  std::vector<bool> live(network.num_nodes(), false);
  std::vector<Tensor> stack(network.outputs().begin(), network.outputs().end());
  while (!stack.empty()) {
    const int64_t p = network.tensor(stack.back()).producer;
    stack.pop_back();
    if (p < 0 || live[static_cast<size_t>(p)]) continue;
    live[static_cast<size_t>(p)] = true;
    for (Tensor t : network.node(static_cast<size_t>(p)).inputs)
      if (t.valid()) stack.push_back(t);
  }
  return live;
}

// Concrete descriptions of every tensor for concrete input shapes (inference over live layers).
Result<std::vector<TensorDesc>> infer_all(const Network& network, const std::map<std::string, Dims>& input_shapes) {
  std::vector<TensorDesc> desc(network.num_tensors());
  for (Tensor t : network.inputs()) {
    const TensorInfo& info = network.tensor(t);
    auto it = input_shapes.find(info.name);
    if (it == input_shapes.end()) return invalid_argument("no shape given for input '{}'", info.name);
    desc[t.id] = TensorDesc{info.desc.dtype, it->second};
  }
  const std::vector<bool> live = live_nodes(network);
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    if (!live[i]) continue;
    const Node& node = network.node(i);
    if (node.kind == OpKind::kConstant) {
      desc[node.outputs[0].id] = network.tensor(node.outputs[0]).desc;
      continue;
    }
    graph::InferContext ctx{node.kind, node.name, node.attributes, {}, {}};
    for (Tensor t : node.inputs) {
      ctx.inputs.push_back(t.valid() ? &desc[t.id] : nullptr);
      ctx.input_names.push_back(t.valid() ? network.tensor(t).name : std::string());
    }
    const graph::OpDef* def = graph::find_op_def(node.kind);
    if (def == nullptr) return unsupported("layer '{}': no definition for {}", node.name, op_kind_name(node.kind));
    TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> outs, def->infer(ctx));
    for (size_t o = 0; o < outs.size() && o < node.outputs.size(); ++o) desc[node.outputs[o].id] = outs[o];
  }
  return desc;
}

json tensor_ref(const Network& network, Tensor t) {
  const TensorInfo& info = network.tensor(t);
  return json{{"name", info.name}, {"dtype", std::string(data_type_name(info.desc.dtype))}, {"shape", info.desc.shape.values()}};
}

}  // namespace

Result<CpuPlan> make_cpu_plan(const Network& network, const std::map<std::string, Dims>& opt_inputs,
                              const PlanProgressFn& progress) {
  TO_RETURN_IF_ERROR(network.status());
  std::unique_ptr<Backend> backend = make_cpu_backend();
  const std::vector<bool> live = live_nodes(network);
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> opt_desc, infer_all(network, opt_inputs));

  CpuPlan plan;
  json constants = json::object();
  json layers = json::array();
  uint64_t weight_bytes = 0;
  uint64_t activation_bytes = 0;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (node.kind == OpKind::kConstant) {
      // Every constant, live or not: network_from_json resolves them all.
      const ConstantData& c = *node.constant;
      if (!constants.contains(c.content_sha256)) {
        constants[c.content_sha256] = json{{"blob", blob_name_for(c.content_sha256)},
                                           {"dtype", std::string(data_type_name(c.view.dtype))},
                                           {"shape", c.view.shape.values()}};
        plan.blobs.push_back(PlanBlob{blob_name_for(c.content_sha256), c.view, node.constant});
        weight_bytes += c.view.byte_size();
      }
      continue;
    }
    if (!live[i]) continue;
    TO_RETURN_IF_ERROR(backend->supports(network, i));
    if (progress) progress(i, network.num_nodes(), node, kTactic);
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
           {"network", json::parse(to_json(network, -1))},
           {"constants", std::move(constants)},
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
  if (!doc.contains("network") || !doc.contains("constants") || !doc["constants"].is_object())
    return corrupt_data("cpu plan: missing \"network\" or \"constants\"");
  const json& constants = doc["constants"];
  ConstantResolver resolve = [&](const std::string& layer, const std::string&, const std::string& sha) -> Result<ConstantBytes> {
    auto it = constants.find(sha);
    if (it == constants.end()) return corrupt_data("cpu plan: constant '{}' ({}) has no entry in the constants table", layer, sha);
    if (!it->is_object() || !it->contains("blob") || !it->contains("dtype") || !it->contains("shape"))
      return corrupt_data("cpu plan: constant '{}' has a malformed constants entry", layer);
    try {
      TO_ASSIGN_OR_RETURN(DataType dtype, parse_data_type(it->at("dtype").get<std::string>()));
      Dims shape(it->at("shape").get<std::vector<int64_t>>());
      TO_ASSIGN_OR_RETURN(ConstantBytes bytes, blobs(it->at("blob").get<std::string>()));
      TO_ASSIGN_OR_RETURN(int64_t expected, shape.byte_size(dtype));
      if (bytes.view.byte_size() != static_cast<size_t>(expected))
        return corrupt_data("cpu plan: constant '{}' blob holds {} bytes, {}{} needs {}", layer, bytes.view.byte_size(),
                            data_type_name(dtype), shape.to_string(), expected);
      bytes.view.dtype = dtype;
      bytes.view.shape = shape;
      return bytes;
    } catch (const json::exception& e) {
      return corrupt_data("cpu plan: constant '{}': {}", layer, e.what());
    }
  };
  auto network = network_from_json(doc["network"].dump(), resolve);
  if (!network.is_ok()) return network.status().with_context("cpu plan");
  return network;
}

Result<std::map<std::string, Dims>> infer_output_shapes(const Network& network,
                                                        const std::map<std::string, Dims>& input_shapes) {
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_all(network, input_shapes));
  std::map<std::string, Dims> result;
  for (Tensor t : network.outputs()) result[network.tensor(t).name] = desc[t.id].shape;
  return result;
}

}  // namespace tensoracle::backends::cpu
