// Canonical form and structural hash (network.h). Each tensor gets a content signature built
// Merkle-style from what produces it (kind, attributes, constant content, input signatures), so
// the order of definition and the names of layers and internal tensors drop out. Layers are then
// listed in a topological order that breaks ties by signature.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/errors.h"
#include "graph/liveness.h"
#include "tensoracle/hashing.h"
#include "tensoracle/network.h"

namespace tensoracle {

namespace {

std::string attributes_text(const AttributeMap& attrs) {
  std::string out;
  for (const auto& [key, value] : attrs) out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, attribute_to_string(value));
  return out;
}

struct Canonicalizer {
  const Network& net;
  std::vector<bool> live;
  std::vector<std::string> node_sig;
  std::vector<std::string> tensor_sig;

  explicit Canonicalizer(const Network& n)
      : net(n), live(n.num_nodes(), false), node_sig(n.num_nodes()), tensor_sig(n.num_tensors()) {}

  void mark_live() { live = graph::live_nodes(net); }

  // The line of a node with its inputs written as `refs` (input signatures or canonical ids).
  std::string node_line(size_t i, const std::vector<std::string>& refs) const {
    const Node& node = net.node(i);
    std::string line = fmt::format("{}[{}]({})", op_kind_name(node.kind), attributes_text(node.attribute_map()), fmt::join(refs, ", "));
    if (node.constant) line += " sha256=" + node.constant->content_sha256;
    std::vector<std::string> outs;
    for (Tensor t : node.outputs) outs.push_back(net.tensor(t).desc.to_string());
    return line + " : " + fmt::format("{}", fmt::join(outs, ", "));
  }

  void sign() {
    for (Tensor t : net.inputs())
      tensor_sig[t.id] = sha256_hex("input " + net.tensor(t).name + " " + net.tensor(t).desc.to_string());
    // Definition order is topological.
    for (size_t i = 0; i < net.num_nodes(); ++i) {
      if (!live[i]) continue;
      std::vector<std::string> refs;
      for (Tensor t : net.node(i).inputs) refs.push_back(t.valid() ? tensor_sig[t.id] : "-");
      node_sig[i] = sha256_hex(node_line(i, refs));
      for (size_t o = 0; o < net.node(i).outputs.size(); ++o)
        tensor_sig[net.node(i).outputs[o].id] = sha256_hex(fmt::format("{}:{}", node_sig[i], o));
    }
  }

  std::string text() {
    std::string out = "tensoracle-graph 1\n";
    std::vector<std::string> id(net.num_tensors());
    std::vector<Tensor> inputs = net.inputs();
    std::sort(inputs.begin(), inputs.end(),
              [&](Tensor a, Tensor b) { return net.tensor(a).name < net.tensor(b).name; });
    for (Tensor t : inputs) {
      id[t.id] = "@" + net.tensor(t).name;
      out += fmt::format("input {} : {}\n", id[t.id], net.tensor(t).desc.to_string());
    }
    // Kahn's algorithm over live nodes; the ready set is ordered by signature.
    std::vector<int> pending(net.num_nodes(), 0);
    std::vector<std::vector<size_t>> consumers(net.num_tensors());
    std::set<std::pair<std::string, size_t>> ready;
    for (size_t i = 0; i < net.num_nodes(); ++i) {
      if (!live[i]) continue;
      for (Tensor t : net.node(i).inputs)
        if (t.valid() && net.tensor(t).producer >= 0) {
          ++pending[i];
          consumers[t.id].push_back(i);
        }
      if (pending[i] == 0) ready.insert({node_sig[i], i});
    }
    size_t next_id = 0;
    while (!ready.empty()) {
      const size_t i = ready.begin()->second;
      ready.erase(ready.begin());
      const Node& node = net.node(i);
      std::vector<std::string> refs, outs;
      for (Tensor t : node.inputs) refs.push_back(t.valid() ? id[t.id] : "-");
      for (Tensor t : node.outputs) {
        id[t.id] = fmt::format("%{}", next_id++);
        outs.push_back(id[t.id]);
      }
      out += fmt::format("{} = {}\n", fmt::join(outs, ", "), node_line(i, refs));
      for (Tensor t : node.outputs)
        for (size_t c : consumers[t.id])
          if (--pending[c] == 0) ready.insert({node_sig[c], c});
    }
    std::vector<std::pair<std::string, std::string>> outputs;
    for (Tensor t : net.outputs()) outputs.push_back({net.tensor(t).name, id[t.id]});
    std::sort(outputs.begin(), outputs.end());
    for (const auto& [name, ref] : outputs) out += fmt::format("output {} = {}\n", name, ref);
    return out;
  }
};

}  // namespace

Result<std::string> canonical_form(const Network& network) {
  TO_RETURN_IF_ERROR(network.status().with_context("canonical form of a network with a definition error"));
  if (network.outputs().empty()) return invalid_argument("canonical form: the network has no outputs (mark_output)");
  Canonicalizer c(network);
  c.mark_live();
  c.sign();
  return c.text();
}

Result<std::string> structural_hash(const Network& network) {
  TO_ASSIGN_OR_RETURN(std::string text, canonical_form(network));
  return sha256_hex(text);
}

}  // namespace tensoracle
