// The table of tactic families, built from op_families.h.
#include <algorithm>

#include "backends/cuda/attention/attention_families.h"
#include "backends/cuda/cublaslt/cublaslt_families.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/cudnn/conv_families.h"
#include "backends/cuda/cutlass/cutlass_families.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/pointwise_families.h"
#include "backends/cuda/op_families.h"
#include "backends/cuda/plugin_family.h"

namespace tensoracle::backends::cuda {

void FamilyTable::add(OpKind kind, std::shared_ptr<const TacticFamily> family) { by_kind_[kind].push_back(std::move(family)); }

const std::vector<std::shared_ptr<const TacticFamily>>& FamilyTable::for_kind(OpKind kind) const {
  static const std::vector<std::shared_ptr<const TacticFamily>> kNone;
  auto it = by_kind_.find(kind);
  return it == by_kind_.end() ? kNone : it->second;
}

void FamilyTraits::merge(const FamilyTraits& other) {
  const auto add = [](std::vector<size_t>& to, const std::vector<size_t>& from) {
    for (size_t i : from)
      if (std::find(to.begin(), to.end(), i) == to.end()) to.push_back(i);
  };
  epilogue |= other.epilogue;
  quantize_fusion |= other.quantize_fusion;
  quantized_copy |= other.quantized_copy;
  nhwc |= other.nhwc;
  prefers_nhwc |= other.prefers_nhwc;
  add(nhwc_constant_inputs, other.nhwc_constant_inputs);
  add(bshd_inputs, other.bshd_inputs);
  bshd_output |= other.bshd_output;
}

bool FamilyTraits::covers_quantization_of(const StepInstance& step) const {
  return (quantize_fusion || !step.fuses_quantization()) && (quantized_copy || !step.quantization.copy);
}

FamilyTraits FamilyTable::traits(const Node& node) const {
  FamilyTraits merged;
  for (const auto& family : for_kind(node.kind)) merged.merge(family->traits(node));
  return merged;
}

const TacticFamily* FamilyTable::find(const std::string& name) const {
  for (const auto& [kind, families] : by_kind_)
    for (const auto& family : families)
      if (family->name() == name) return family.get();
  return nullptr;
}

const FamilyTable& tactic_families() {
  static const FamilyTable table = [] {
    FamilyTable t;
#define TO_ADD_FAMILY_(Kind, factory) t.add(OpKind::k##Kind, factory);
    TENSORACLE_CUDA_FAMILIES(TO_ADD_FAMILY_)
#undef TO_ADD_FAMILY_
    return t;
  }();
  return table;
}

}  // namespace tensoracle::backends::cuda
