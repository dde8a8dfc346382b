// The targets of a Q/DQ network and the fp32 network calibration runs (calibrate.h).
#include <fmt/format.h>

#include <map>
#include <set>

#include "core/errors.h"
#include "passes/passes.h"
#include "passes/rebuild.h"
#include "tensoracle/calibrate.h"

namespace tensoracle {

namespace {

const char* const kWeightSource = "weights:";

// Every layer reading each tensor (by node index).
std::vector<std::vector<size_t>> readers_of(const Network& network) {
  std::vector<std::vector<size_t>> readers(network.num_tensors());
  for (size_t i = 0; i < network.num_nodes(); ++i)
    for (Tensor t : network.node(i).inputs)
      if (t.valid()) readers[t.id].push_back(i);
  return readers;
}

// A quantize layer's output must go to dequantize layers only, which the calibration network
// then bypasses.
Status check_only_dequantized(const Network& network, const Node& q, const std::vector<std::vector<size_t>>& readers) {
  const Tensor out = q.outputs[0];
  for (Tensor o : network.outputs())
    if (o == out)
      return invalid_argument("quantize layer '{}': its output '{}' is a network output; calibration takes Q -> DQ "
                              "pairs out and cannot take this one",
                              q.name, network.tensor(out).name);
  for (size_t r : readers[out.id]) {
    const Node& reader = network.node(r);
    if (reader.kind != OpKind::kDequantize)
      return invalid_argument("quantize layer '{}': its output feeds layer '{}' ({}), not only dequantize layers; "
                              "calibration takes Q -> DQ pairs out and cannot take this one",
                              q.name, reader.name, op_kind_name(reader.kind));
  }
  return Status::ok();
}

// The name a Q layer's scale is read under: the weight its constant came from.
std::string scale_name_of(const Network& network, const Node& q) {
  const TensorInfo& scale = network.tensor(q.inputs[1]);
  if (scale.producer >= 0) {
    const Node& producer = network.node(static_cast<size_t>(scale.producer));
    if (producer.kind == OpKind::kConstant && producer.constant &&
        producer.constant->source.rfind(kWeightSource, 0) == 0)
      return producer.constant->source.substr(std::char_traits<char>::length(kWeightSource));
  }
  return q.name + ".scale";
}

bool is_constant(const Network& network, Tensor t) {
  const TensorInfo& info = network.tensor(t);
  return info.producer >= 0 && network.node(static_cast<size_t>(info.producer)).kind == OpKind::kConstant;
}

}  // namespace

Result<std::vector<CalibrationTarget>> quantization_targets(const Network& network) {
  TO_RETURN_IF_ERROR(network.status());
  const auto readers = readers_of(network);
  std::vector<CalibrationTarget> targets;
  std::map<std::string, size_t> by_scale;  // scale name -> target
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& q = network.node(i);
    const auto* attrs = q.attributes<QuantizeAttributes>();
    if (attrs == nullptr) continue;
    TO_RETURN_IF_ERROR(check_only_dequantized(network, q, readers));
    CalibrationTarget target;
    target.tensor = network.tensor(q.inputs[0]).name;
    target.scale_name = scale_name_of(network, q);
    target.format = attrs->output_type;
    if (is_constant(network, q.inputs[0])) {
      const int64_t rank = static_cast<int64_t>(network.tensor(q.inputs[0]).desc.shape.rank());
      target.axis = attrs->axis < 0 ? attrs->axis + rank : attrs->axis;
    }
    if (auto it = by_scale.find(target.scale_name); it != by_scale.end()) {
      const CalibrationTarget& first = targets[it->second];
      if (first.tensor != target.tensor)
        return invalid_argument("scale '{}' is read by quantize layers of two tensors, '{}' and '{}' (layer '{}'): one "
                                "scale cannot be calibrated for both",
                                target.scale_name, first.tensor, target.tensor, q.name);
      continue;
    }
    by_scale.emplace(target.scale_name, targets.size());
    targets.push_back(std::move(target));
  }
  if (targets.empty())
    return invalid_argument("the network has no quantize layers: name the tensors to calibrate instead");
  return targets;
}

Status check_placeholders_are_scales(const Network& network, const std::vector<std::string>& placeholders) {
  const std::set<std::string> missing(placeholders.begin(), placeholders.end());
  const auto readers = readers_of(network);
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (node.kind != OpKind::kConstant || !node.constant) continue;
    const std::string& source = node.constant->source;
    if (source.rfind(kWeightSource, 0) != 0) continue;
    const std::string name = source.substr(std::char_traits<char>::length(kWeightSource));
    if (missing.count(name) == 0) continue;
    for (size_t r : readers[node.outputs[0].id]) {
      const Node& reader = network.node(r);
      const bool scale = (reader.kind == OpKind::kQuantize || reader.kind == OpKind::kDequantize) &&
                         reader.inputs.size() > 1 && reader.inputs[1] == node.outputs[0];
      if (!scale)
        return not_found("weight '{}' is not in the weights, and layer '{}' ({}) reads it as more than a "
                         "quantization scale (only scales may be missing before calibration)",
                         name, reader.name, op_kind_name(reader.kind));
      // A dequantize layer the calibration network keeps would run with the placeholder.
      const TensorInfo& quantized = network.tensor(reader.inputs[0]);
      if (reader.kind == OpKind::kDequantize &&
          (quantized.producer < 0 || network.node(static_cast<size_t>(quantized.producer)).kind != OpKind::kQuantize))
        return not_found("weight '{}' is not in the weights, and dequantize layer '{}' reads it as the scale of '{}', "
                         "which no quantize layer makes: that scale belongs to already-quantized data and cannot be "
                         "calibrated",
                         name, reader.name, quantized.name);
    }
  }
  return Status::ok();
}

Result<Network> calibration_network(const Network& network, const std::vector<CalibrationTarget>& targets) {
  TO_RETURN_IF_ERROR(network.status());
  const auto readers = readers_of(network);
  for (size_t i = 0; i < network.num_nodes(); ++i)
    if (network.node(i).kind == OpKind::kQuantize)
      TO_RETURN_IF_ERROR(check_only_dequantized(network, network.node(i), readers));
  TO_ASSIGN_OR_RETURN(Network bypassed, passes::rebuild(network, [&](passes::Rebuild& r, size_t index) -> Result<bool> {
    const Node& node = network.node(index);
    if (node.kind == OpKind::kQuantize) return true;  // nothing: its dequantize layers read its input
    const auto* dq = node.attributes<DequantizeAttributes>();
    if (dq == nullptr) return false;
    const TensorInfo& in = network.tensor(node.inputs[0]);
    if (in.producer < 0 || network.node(static_cast<size_t>(in.producer)).kind != OpKind::kQuantize) return false;
    Tensor x = r.mapped(network.node(static_cast<size_t>(in.producer)).inputs[0]);
    Network& target = r.target();
    // A cast stands in for the pair where the type changes, and where the pair's output is a
    // network output (which would otherwise rename x).
    bool network_output = false;
    for (Tensor o : network.outputs()) network_output = network_output || o == node.outputs[0];
    if (target.tensor(x).desc.dtype != dq->output_type || network_output)
      x = target.cast(x, CastAttributes().set_output_type(dq->output_type).set_name(node.name + ".calibration_cast"));
    r.map(node.outputs[0], x);
    return true;
  }));
  // The measured activations become outputs (constants and network inputs are read directly).
  for (const CalibrationTarget& target : targets) {
    TO_ASSIGN_OR_RETURN_CONTEXT(Tensor t, bypassed.find_tensor(target.tensor),
                                fmt::format("calibration target for scale '{}'", target.scale_name));
    const TensorInfo& info = bypassed.tensor(t);
    if (info.producer < 0 || is_constant(bypassed, t)) continue;
    bool already = false;
    for (Tensor o : bypassed.outputs()) already = already || o == t;
    if (!already) bypassed.mark_output(t);
  }
  TO_RETURN_IF_ERROR(bypassed.status());
  return passes::remove_dead_layers(bypassed);
}

}  // namespace tensoracle
