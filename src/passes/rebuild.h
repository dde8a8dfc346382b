// Rebuilding a network node by node: the common mechanics of every pass. Inputs, outputs and
// their names carry over; each node is copied unless the pass replaces it.
#pragma once

#include <functional>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::passes {

class Rebuild {
 public:
  // The target resolves plugin layers through the source's plugins.
  explicit Rebuild(const Network& source) : source_(source), map_(source.num_tensors()) {
    target_.set_plugins(source.plugins());
  }
  const Network& source() const { return source_; }
  Network& target() { return target_; }
  // The target tensor standing for source tensor `t` (invalid if not yet built).
  Tensor mapped(Tensor t) const { return t.valid() ? map_[t.id] : Tensor{}; }
  void map(Tensor source_tensor, Tensor target_tensor) { map_[source_tensor.id] = target_tensor; }
  // Copies source node `index` as it is (inputs mapped).
  Status copy_node(size_t index);

 private:
  const Network& source_;
  Network target_;
  std::vector<Tensor> map_;
};

// Visits every node in order: `replace` returns true when it built the node's outputs itself
// (and mapped them); otherwise the node is copied. Nodes whose outputs are already mapped (a
// pass replaced them together with an earlier node) are skipped. `input_type`, when given, says
// the type each network input gets (by default its own).
Result<Network> rebuild(const Network& source, const std::function<Result<bool>(Rebuild&, size_t)>& replace,
                        const std::function<DataType(const TensorInfo&)>& input_type = nullptr);

// How many live layers read each tensor, plus one per marking as an output.
std::vector<int> consumer_counts(const Network& network);

}  // namespace tensoracle::passes
