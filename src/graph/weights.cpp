// Network::weight: a zero-copy constant from a Weights (safetensors) object. Kept apart from
// network.cpp so programs that never touch safetensors do not link the reader.
#include "core/errors.h"
#include "graph/network_impl.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {

Tensor Network::weight(const Weights& weights, const std::string& name) {
  if (auto it = impl_->weight_tensors.find(name); it != impl_->weight_tensors.end()) return it->second;
  auto view = weights.view(name);
  if (!view.is_ok()) {
    impl_->fail(view.status().with_context(fmt::format("weight '{}'", name)));
    return {};
  }
  // The copy shares the mapping, keeping the view valid as long as the network lives.
  auto owner = std::make_shared<Weights>(weights);
  Tensor t = add_constant(*view, std::move(owner), name, "weights:" + name);
  if (t.valid()) impl_->weight_tensors[name] = t;
  return t;
}

}  // namespace tensoracle
