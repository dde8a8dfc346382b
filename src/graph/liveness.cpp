#include "graph/liveness.h"

namespace tensoracle::graph {

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

std::vector<size_t> last_readers(const Network& network, const std::vector<bool>& live) {
  std::vector<size_t> last(network.num_tensors(), kKeptToTheEnd);
  for (size_t i = 0; i < network.num_nodes(); ++i)  // definition order: the last assignment wins
    if (live[i])
      for (Tensor t : network.node(i).inputs)
        if (t.valid()) last[t.id] = i;
  for (Tensor t : network.outputs()) last[t.id] = kKeptToTheEnd;
  return last;
}

}  // namespace tensoracle::graph
