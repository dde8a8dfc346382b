// The run's plugin libraries: the pipeline's ([model] plugins) and the caller's (--plugin),
// loaded once into the one registry every build and engine of the run resolves plugins through,
// and their record in report.json.
#pragma once

#include <nlohmann/json.hpp>

#include "tensoracle/plugin_registry.h"
#include "tensoracle/workflow.h"

namespace tensoracle::workflow {

// Loads the pipeline's libraries, then the options'. A library that does not load, or registers
// a plugin identity an earlier one did, is an error naming where it was given
// ("pipeline.toml: model.plugins[1]" or "--plugin") and the path.
Result<PluginRegistry> load_plugin_libraries(const Pipeline& pipeline, const WorkflowOptions& options);

// [{path, sha256, plugins: ["ns::name version", ...]}] in load order.
nlohmann::json plugin_libraries_record(const PluginRegistry& plugins);

}  // namespace tensoracle::workflow
