// Plugin layers on the cpu backend: the plugin's own CPU implementation (Plugin::run_on_host) runs
// on host arrays in the tensors' types, LINEAR; the executor's fp64 buffers are converted to them
// and back (exactly: every value of a tensor's type is an fp64 value).
#pragma once

#include <vector>

#include "backends/backend.h"

namespace tensoracle::backends::cpu {

// Ok, or kUnsupported / kNotFound naming the layer and the plugin: not loaded in the network's
// plugins, or without a CPU implementation.
Status supports_plugin_layer(const Network& network, const Node& node);

// Makes the layer's plugin from its parameters, configures it for the instance's shapes and runs
// it on the host; every error names the layer and the plugin.
Status run_plugin_layer(const Network& network, const NodeInstance& instance, const std::vector<const double*>& inputs,
                        const std::vector<double*>& outputs);

}  // namespace tensoracle::backends::cpu
