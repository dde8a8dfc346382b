// What every backend's engine plan shares (plan_network.h).
#include "backends/plan_network.h"

#include "core/errors.h"
#include "core/quoted.h"
#include "graph/liveness.h"
#include "graph/network_json.h"
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

Result<Network> restore_network(const JsonField& plan, const BlobLookup& blobs) {
  TO_ASSIGN_OR_RETURN(const JsonField network, plan.member("network"));
  TO_ASSIGN_OR_RETURN(const JsonField constants, plan.member("constants"));
  TO_RETURN_IF_ERROR(constants.require_object());
  ConstantResolver resolve = [&](const std::string& layer, const std::string&, const std::string& sha) -> Result<ConstantBytes> {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> entry, constants.optional_member(sha));
    if (!entry) return constants.error("constant {} ({}) has no entry", quote(layer), quote(sha));
    TO_RETURN_IF_ERROR(entry->allow_keys({"blob", "dtype", "shape"}));
    TO_ASSIGN_OR_RETURN(const JsonField dtype_field, entry->member("dtype"));
    TO_ASSIGN_OR_RETURN(const std::string dtype_name, dtype_field.as_string());
    auto dtype = parse_data_type(dtype_name);
    if (!dtype.is_ok()) return dtype_field.error("{}", dtype.status().message());
    TO_ASSIGN_OR_RETURN(const Dims shape, entry->get_dims("shape"));
    TO_ASSIGN_OR_RETURN(const std::string blob, entry->get_name("blob"));
    auto bytes = blobs(blob);
    if (!bytes.is_ok()) return entry->error("{}", bytes.status().message());
    auto expected = shape.byte_size(*dtype);
    if (!expected.is_ok()) return entry->error("constant {}: {}", quote(layer), expected.status().message());
    if (bytes->view.byte_size() != static_cast<size_t>(*expected))
      return entry->error("constant {}: blob {} holds {} bytes, {}{} needs {}", quote(layer), quote(blob),
                          bytes->view.byte_size(), data_type_name(*dtype), shape.to_string(), *expected);
    bytes->view.dtype = *dtype;
    bytes->view.shape = shape;
    return *std::move(bytes);
  };
  // Errors name the plan's field ("engine 'e', plan: /network/layers/3: ...").
  return graph::network_from_json_field(network, resolve);
}

Result<std::map<std::string, Dims>> given_input_shapes(const Network& network, const NamedArrayViews& inputs,
                                                       std::string_view backend) {
  for (const auto& [name, view] : inputs) {
    auto t = network.find_tensor(name);
    if (!t.is_ok() || network.tensor(*t).producer >= 0)
      return invalid_argument("{}: '{}' is not an input of the network", backend, name);
  }
  std::map<std::string, Dims> shapes;
  for (Tensor t : network.inputs()) {
    const TensorInfo& info = network.tensor(t);
    auto it = inputs.find(info.name);
    if (it == inputs.end()) return invalid_argument("{}: input '{}' ({}) was not given", backend, info.name, info.desc.to_string());
    const ArrayView& view = it->second;
    bool fits = view.dtype == info.desc.dtype && view.shape.rank() == info.desc.shape.rank() && view.shape.is_static();
    for (size_t d = 0; fits && d < view.shape.rank(); ++d) fits = info.desc.shape[d] < 0 || info.desc.shape[d] == view.shape[d];
    if (!fits)
      return invalid_argument("{}: input '{}' is {}{} but the network declares {}", backend, info.name,
                              data_type_name(view.dtype), view.shape.to_string(), info.desc.to_string());
    shapes[info.name] = view.shape;
  }
  return shapes;
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
    graph::InferContext ctx{node.kind, node.name, node.op_attributes, {}, {}};
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
