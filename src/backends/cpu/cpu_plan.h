// The CPU backend's engine plan: the network's JSON (network.h to_json) plus, per layer, the
// tactic and precision, and the table of constants. Constant bytes are not in the plan; they are
// the engine's weight blobs ("const/<sha256>", one per distinct constant), so an engine runs
// without the safetensors it was built from. docs/engines.md shows the layout.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/plan_network.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cpu {

// 2: plugin layers record their negotiated formats ("formats", plugin_formats.h).
inline constexpr int kCpuPlanVersion = 2;

// Plans `network` (which the CPU backend must support entirely). `opt_inputs` (input shapes at
// the first profile's opt) sizes the memory estimate. `progress` (may be empty) hears of each
// layer: "layer 3/9 conv1 (convolution): tactic cpu.reference".
Result<BackendPlan> make_cpu_plan(const Network& network, const std::map<std::string, Dims>& opt_inputs,
                                  const BuildProgressFn& progress);

// What only the cpu backend knows in its plan (Backend::check_plan): the plan version, and one
// "layers" entry per live layer, in order, naming its kind, tactic, precision, inputs and outputs
// exactly as the network (already checked by the engine layer) has them, and for plugin layers
// the formats the backend negotiates for them. `source` starts errors.
Status check_cpu_plan(const CheckedPlan& plan, const std::string& source);

}  // namespace tensoracle::backends::cpu
