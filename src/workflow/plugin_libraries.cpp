// The run's plugin libraries (plugin_libraries.h).
#include "workflow/plugin_libraries.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

namespace tensoracle::workflow {

Result<PluginRegistry> load_plugin_libraries(const Pipeline& pipeline, const WorkflowOptions& options) {
  std::vector<std::pair<std::string, std::string>> given;  // path, where it was given
  for (size_t i = 0; i < pipeline.plugins.size(); ++i)
    given.emplace_back(pipeline.plugins[i], fmt::format("{}: model.plugins[{}]", pipeline.path, i));
  for (const std::string& path : options.plugins) given.emplace_back(path, options.plugins_option);
  PluginRegistry registry;
  std::set<std::string> loaded;
  for (const auto& [path, where] : given) {
    // One file named twice (in the pipeline and with --plugin) is one library, not two that
    // register the same plugins.
    std::error_code ec;
    const std::string file = std::filesystem::weakly_canonical(path, ec).string();
    if (!ec && !loaded.insert(file).second) continue;
    if (const Status status = registry.load_library(path); !status.is_ok()) return status.with_context(where);
  }
  return registry;
}

nlohmann::json plugin_libraries_record(const PluginRegistry& plugins) {
  nlohmann::json record = nlohmann::json::array();
  for (const auto& library : plugins.libraries())
    record.push_back({{"path", library->path}, {"sha256", library->sha256}, {"plugins", library->plugins}});
  return record;
}

}  // namespace tensoracle::workflow
