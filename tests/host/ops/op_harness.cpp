#include "host/ops/op_harness.h"

#include "passes/rebuild.h"

#include <cctype>
#include <random>

#include "tensoracle/float_formats.h"

namespace tensoracle::testing {

std::string OpCase::id() const {
  std::string out = op + "__" + params;
  for (char& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return out;
}

Tolerance default_tolerance(DataType type) {
  switch (type) {
    case DataType::kFloat32: return {1e-6, 1e-5};
    case DataType::kFloat16: return {1e-3, 1e-3};
    case DataType::kBFloat16: return {1e-2, 1e-2};
    default: return {0, 0};  // integers, bool, fp8 codes: exact
  }
}

Tolerance tolerance_for(const OpCase& c, DataType type) {
  auto it = c.tolerance.find(type);
  return it == c.tolerance.end() ? default_tolerance(type) : it->second;
}

HostArray random_array(DataType type, const Dims& shape, uint64_t seed, double low, double high) {
  HostArray a = HostArray::zeros(type, shape).value();
  std::mt19937_64 rng(seed);
  const int64_t n = a.element_count();
  std::vector<double> values(static_cast<size_t>(n));
  std::uniform_real_distribution<double> uniform(low, high);
  for (auto& v : values) {
    if (type == DataType::kBool) v = static_cast<double>(rng() & 1);
    else if (type == DataType::kInt8) v = static_cast<double>(static_cast<int64_t>(rng() % 256) - 128);
    else if (is_integer(type)) v = static_cast<double>(rng() % 16);
    else v = uniform(rng);
  }
  if (n > 0 && type != DataType::kBool) values[0] = values[0] == 0 ? 1 : values[0];
  if (n > 0 && type == DataType::kBool) values[0] = 1;
  convert_elements(DataType::kFloat64, values.data(), type, a.data(), static_cast<size_t>(n));
  return a;
}

Result<NamedArrays> seeded_inputs(const Network& net, uint64_t seed, double low, double high) {
  NamedArrays out;
  for (Tensor t : net.inputs()) {
    const TensorInfo& info = net.tensor(t);
    if (!info.desc.shape.is_static())
      return Status(StatusCode::kInvalidArgument, "harness inputs need static shapes: " + info.name);
    out[info.name] = random_array(info.desc.dtype, info.desc.shape, seed++, low, high);
  }
  return out;
}

Result<Network> with_float_type(const Network& net, DataType type) {
  const std::string fp32_name(data_type_name(DataType::kFloat32));
  const std::string type_name(data_type_name(type));
  return passes::rebuild(net, [&](passes::Rebuild& r, size_t index) -> Result<bool> {
    const Node& node = net.node(index);
    Network& out = r.target();
    std::vector<Tensor> outs;
    if (node.kind == OpKind::kConstant) {
      if (node.constant->view.dtype != DataType::kFloat32) return false;
      TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(type, node.constant->view.shape));
      convert_elements(DataType::kFloat32, node.constant->view.data, type, array.data(),
                       static_cast<size_t>(array.element_count()));
      outs.push_back(out.add_constant(std::move(array), node.name));
    } else {
      AttributeMap attrs = node.attribute_map();
      auto it = attrs.find("output_type");
      if (it == attrs.end() || !std::holds_alternative<std::string>(it->second) || std::get<std::string>(it->second) != fp32_name)
        return false;
      it->second = type_name;
      std::vector<Tensor> inputs;
      for (Tensor t : node.inputs) inputs.push_back(r.mapped(t));
      outs = out.add_layer(node.kind, std::move(inputs), std::move(attrs), node.name);
    }
    TO_RETURN_IF_ERROR(out.status());
    for (size_t o = 0; o < outs.size(); ++o) {
      out.set_tensor_name(outs[o], net.tensor(node.outputs[o]).name);
      r.map(node.outputs[o], outs[o]);
    }
    return true;
  }, [&](const TensorInfo& info) { return info.desc.dtype == DataType::kFloat32 ? type : info.desc.dtype; });
}

}  // namespace tensoracle::testing
