// What every backend's engine plan shares (plan_network.h).
#include "backends/plan_network.h"

#include "core/errors.h"
#include "graph/liveness.h"
#include "graph/op_def.h"

namespace tensoracle::backends {

using nlohmann::json;

namespace {
std::string blob_name_for(const std::string& sha256) { return "const/" + sha256; }
}  // namespace

NetworkPlan plan_network(const Network& network) {
  NetworkPlan plan;
  plan.network = json::parse(to_json(network, -1));
  plan.constants = json::object();
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (node.kind != OpKind::kConstant) continue;
    // Every constant, live or not: network_from_json resolves them all.
    const ConstantData& c = *node.constant;
    if (plan.constants.contains(c.content_sha256)) continue;
    plan.constants[c.content_sha256] = json{{"blob", blob_name_for(c.content_sha256)},
                                            {"dtype", std::string(data_type_name(c.view.dtype))},
                                            {"shape", c.view.shape.values()}};
    plan.blobs.push_back(PlanBlob{blob_name_for(c.content_sha256), c.view, node.constant});
    plan.weight_bytes += c.view.byte_size();
  }
  return plan;
}

BlobLookup engine_blobs(const EngineFile& file) {
  auto keep = std::make_shared<EngineFile>(file);
  return [keep](const std::string& name) -> Result<ConstantBytes> {
    TO_ASSIGN_OR_RETURN(ByteView bytes, keep->blob(name));
    ConstantBytes out;
    out.view = ArrayView{DataType::kUInt8, Dims({static_cast<int64_t>(bytes.size)}), bytes.data};
    out.owner = keep;
    return out;
  };
}

Result<Network> restore_network(const json& doc, const BlobLookup& blobs, const std::string& what) {
  if (!doc.contains("network") || !doc.contains("constants") || !doc["constants"].is_object())
    return corrupt_data("{}: missing \"network\" or \"constants\"", what);
  const json& constants = doc["constants"];
  ConstantResolver resolve = [&](const std::string& layer, const std::string&, const std::string& sha) -> Result<ConstantBytes> {
    auto it = constants.find(sha);
    if (it == constants.end()) return corrupt_data("{}: constant '{}' ({}) has no entry in the constants table", what, layer, sha);
    if (!it->is_object() || !it->contains("blob") || !it->contains("dtype") || !it->contains("shape"))
      return corrupt_data("{}: constant '{}' has a malformed constants entry", what, layer);
    try {
      TO_ASSIGN_OR_RETURN(DataType dtype, parse_data_type(it->at("dtype").get<std::string>()));
      Dims shape(it->at("shape").get<std::vector<int64_t>>());
      TO_ASSIGN_OR_RETURN(ConstantBytes bytes, blobs(it->at("blob").get<std::string>()));
      TO_ASSIGN_OR_RETURN(int64_t expected, shape.byte_size(dtype));
      if (bytes.view.byte_size() != static_cast<size_t>(expected))
        return corrupt_data("{}: constant '{}' blob holds {} bytes, {}{} needs {}", what, layer, bytes.view.byte_size(),
                            data_type_name(dtype), shape.to_string(), expected);
      bytes.view.dtype = dtype;
      bytes.view.shape = shape;
      return bytes;
    } catch (const json::exception& e) {
      return corrupt_data("{}: constant '{}': {}", what, layer, e.what());
    }
  };
  auto network = network_from_json(doc["network"].dump(), resolve);
  if (!network.is_ok()) return network.status().with_context(what);
  return network;
}

Result<std::vector<TensorDesc>> infer_tensor_descs(const Network& network, const std::map<std::string, Dims>& input_shapes) {
  std::vector<TensorDesc> desc(network.num_tensors());
  for (Tensor t : network.inputs()) {
    const TensorInfo& info = network.tensor(t);
    auto it = input_shapes.find(info.name);
    if (it == input_shapes.end()) return invalid_argument("no shape given for input '{}'", info.name);
    desc[t.id] = TensorDesc{info.desc.dtype, it->second};
  }
  const std::vector<bool> live = graph::live_nodes(network);
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

Result<std::map<std::string, Dims>> infer_output_shapes(const Network& network,
                                                        const std::map<std::string, Dims>& input_shapes) {
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_tensor_descs(network, input_shapes));
  std::map<std::string, Dims> result;
  for (Tensor t : network.outputs()) result[network.tensor(t).name] = desc[t.id].shape;
  return result;
}

}  // namespace tensoracle::backends
