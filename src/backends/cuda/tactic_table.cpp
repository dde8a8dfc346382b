// The table of tactic families: every group registers itself here, once.
#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

void FamilyTable::add(OpKind kind, std::shared_ptr<const TacticFamily> family) { by_kind_[kind].push_back(std::move(family)); }

const std::vector<std::shared_ptr<const TacticFamily>>& FamilyTable::for_kind(OpKind kind) const {
  static const std::vector<std::shared_ptr<const TacticFamily>> kNone;
  auto it = by_kind_.find(kind);
  return it == by_kind_.end() ? kNone : it->second;
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
    add_cublaslt_families(t);
    add_cudnn_conv_families(t);
    add_attention_families(t);
    add_pointwise_families(t);
    add_data_movement_families(t);
    return t;
  }();
  return table;
}

}  // namespace tensoracle::backends::cuda
