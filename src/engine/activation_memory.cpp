// How much activation memory an engine may use and how much its network needs
// (engine_validation.h).
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "backends/plan_network.h"
#include "core/errors.h"
#include "engine/engine_validation.h"
#include "graph/liveness.h"

namespace tensoracle {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

// Bytes of one tensor; a dimension only known at run time counts as nothing (nothing can be
// said of it before the run).
uint64_t tensor_bytes(const TensorDesc& desc) {
  auto bytes = desc.shape.byte_size(desc.dtype);
  return bytes.is_ok() ? static_cast<uint64_t>(*bytes) : 0;
}

}  // namespace

ActivationLimit activation_limit(const Environment& environment) {
  if (environment.gpu && environment.gpu->total_memory_bytes > 0)
    return {static_cast<uint64_t>(environment.gpu->total_memory_bytes),
            fmt::format("the memory of the GPU the engine was built for ({})", environment.gpu->name)};
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return {std::numeric_limits<uint64_t>::max(), "no limit (memory size unknown)"};
  return {static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size), "this machine's memory"};
}

Result<uint64_t> peak_activation_bytes(const Network& network, const std::map<std::string, Dims>& input_shapes) {
  TO_ASSIGN_OR_RETURN(const std::vector<TensorDesc> desc, backends::infer_tensor_descs(network, input_shapes));
  const std::vector<bool> live = graph::live_nodes(network);
  std::vector<size_t> last_use = graph::last_readers(network, live);
  uint64_t current = 0;
  for (Tensor t : network.inputs()) current = saturating_add(current, tensor_bytes(desc[t.id]));
  uint64_t peak = current;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    if (!live[i] || node.kind == OpKind::kConstant) continue;  // constants are weights, not activations
    for (Tensor t : node.outputs) current = saturating_add(current, tensor_bytes(desc[t.id]));
    peak = std::max(peak, current);
    for (Tensor t : node.inputs) {
      if (!t.valid() || last_use[t.id] != i) continue;
      const int64_t producer = network.tensor(t).producer;
      if (producer >= 0 && network.node(static_cast<size_t>(producer)).kind == OpKind::kConstant) continue;
      current -= std::min(current, tensor_bytes(desc[t.id]));
      last_use[t.id] = graph::kKeptToTheEnd;  // an input read twice by this layer is freed once
    }
  }
  return peak;
}

}  // namespace tensoracle
