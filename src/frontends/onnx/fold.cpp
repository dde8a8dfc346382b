// evaluate_constant_layers (fold.h).
#include "frontends/onnx/fold.h"

#include <map>

#include "backends/cpu/cpu_backend.h"
#include "core/errors.h"

namespace tensoracle::onnx_import {
namespace {

using Folded = std::optional<std::vector<std::shared_ptr<const ConstantValue>>>;

std::shared_ptr<const ConstantValue> shared_constant(const ConstantData& data) {
  return std::make_shared<ConstantValue>(ConstantValue{data.view, data.owner});
}

// The layers [first, end) of `net` copied into a network of their own, whose constants are the
// constants they read.
class ScratchNetwork {
 public:
  ScratchNetwork(const Network& net) : net_(net) {}

  // The copy of `t`, adding its constant when it is one; nullopt when `t` is not available here.
  std::optional<Tensor> map(Tensor t) {
    if (!t.valid()) return Tensor{};
    if (const auto it = mapped_.find(t.id); it != mapped_.end()) return it->second;
    const TensorInfo& info = net_.tensor(t);
    if (info.producer < 0) return std::nullopt;  // a network input
    const Node& producer = net_.node(static_cast<size_t>(info.producer));
    if (producer.kind != OpKind::kConstant || !producer.constant) return std::nullopt;  // computed outside
    const Tensor copy = scratch_.add_constant(producer.constant->view, producer.constant->owner);
    constants_[copy.id] = producer.constant;
    mapped_[t.id] = copy;
    return copy;
  }

  // Copies node `index`; false when it reads something unavailable or is not evaluable.
  Result<bool> copy(size_t index, int64_t& elements) {
    const Node& node = net_.node(index);
    if (node.kind == OpKind::kConstant) return map(node.outputs[0]).has_value();
    if (op_category(node.kind) == OpCategory::kPlugin) return false;
    std::vector<Tensor> inputs;
    for (Tensor t : node.inputs) {
      const std::optional<Tensor> m = map(t);
      if (!m) return false;
      inputs.push_back(*m);
    }
    for (Tensor t : node.outputs) {
      const Dims& shape = net_.tensor(t).desc.shape;
      if (!shape.is_static()) return false;
      TO_ASSIGN_OR_RETURN(const int64_t count, shape.element_count());
      elements += count;
      if (elements > kMaxFoldedElements) return false;
    }
    const std::vector<Tensor> outputs = scratch_.add_layer(inputs, node.op_attributes);
    TO_RETURN_IF_ERROR(scratch_.status());
    TO_ASSERT(outputs.size() == node.outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) mapped_[node.outputs[i].id] = outputs[i];
    return true;
  }

  Network& scratch() { return scratch_; }
  // The constant behind a copied tensor, or nullptr when a layer computes it.
  std::shared_ptr<const ConstantData> constant_of(Tensor copy) const {
    const auto it = constants_.find(copy.id);
    return it == constants_.end() ? nullptr : it->second;
  }

 private:
  const Network& net_;
  Network scratch_;
  std::map<uint32_t, Tensor> mapped_;                               // net's tensor id -> copy
  std::map<uint32_t, std::shared_ptr<const ConstantData>> constants_;  // copy id -> its constant
};

}  // namespace

Result<Folded> evaluate_constant_layers(const Network& net, size_t first, const std::vector<Tensor>& outputs) {
  ScratchNetwork scratch(net);
  int64_t elements = 0;
  for (size_t i = first; i < net.num_nodes(); ++i) {
    TO_ASSIGN_OR_RETURN(const bool copied, scratch.copy(i, elements));
    if (!copied) return Folded{};
  }
  std::vector<std::shared_ptr<const ConstantValue>> values(outputs.size());
  std::vector<std::string> computed(outputs.size());  // the scratch output's name, "" for a constant
  std::map<uint32_t, std::string> marked;              // an output wanted twice is marked once
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::optional<Tensor> copy = scratch.map(outputs[k]);
    if (!copy || !copy->valid()) return Folded{};
    if (const std::shared_ptr<const ConstantData> constant = scratch.constant_of(*copy)) {
      values[k] = shared_constant(*constant);
      continue;
    }
    if (const auto it = marked.find(copy->id); it != marked.end()) {
      computed[k] = it->second;
      continue;
    }
    computed[k] = fmt::format("folded:{}", k);
    marked[copy->id] = computed[k];
    scratch.scratch().mark_output(*copy, computed[k]);
  }
  TO_RETURN_IF_ERROR(scratch.scratch().status());
  if (scratch.scratch().outputs().empty()) return Folded{std::move(values)};
  TO_ASSIGN_OR_RETURN(NamedArrays arrays, backends::make_cpu_backend()->execute(scratch.scratch(), {}));
  std::map<std::string, std::shared_ptr<const ConstantValue>> by_name;
  for (auto& [name, array] : arrays) {
    auto owner = std::make_shared<HostArray>(std::move(array));
    by_name[name] = std::make_shared<ConstantValue>(ConstantValue{owner->view(), owner});
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (computed[k].empty()) continue;
    const auto it = by_name.find(computed[k]);
    TO_ASSERT(it != by_name.end());
    values[k] = it->second;
  }
  return Folded{std::move(values)};
}

}  // namespace tensoracle::onnx_import
