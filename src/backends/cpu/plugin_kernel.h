// Plugin layers on the cpu backend: the plugin's own CPU implementation (Plugin::run_on_host) runs
// on host arrays in the types and formats negotiated for it (format_negotiation.h) from linear
// producers in their own types; the executor's fp64 buffers are converted to them and back
// (plugin_storage.h).
#pragma once

#include <vector>

#include "backends/backend.h"
#include "backends/plugin_formats.h"

namespace tensoracle::backends::cpu {

// Ok, or kUnsupported / kNotFound naming the layer and the plugin: not loaded in the network's
// plugins, or without a CPU implementation.
Status supports_plugin_layer(const Network& network, const Node& node);

// The formats the cpu backend runs the layer's plugin in: what the plan records.
Result<PluginFormats> plugin_layer_formats(const Network& network, const Node& node);

// Makes the layer's plugin from its parameters, negotiates its formats, configures it for the
// instance's shapes and runs it on the host; every error names the layer and the plugin.
Status run_plugin_layer(const Network& network, const NodeInstance& instance, const std::vector<const double*>& inputs,
                        const std::vector<double*>& outputs);

}  // namespace tensoracle::backends::cpu
