// plugin_library_bundle_needs: what a plugin library's creators say they need from the bundle, for
// `bundle inspect --plugin LIB`.
#include "tensoracle/bundle.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle {

Result<std::vector<PluginDeclaration>> plugin_library_bundle_needs(const std::string& library_path) {
  PluginRegistry registry;
  // The bundle being inspected is this library's to check, not a precondition of reading it.
  PluginLibraryOptions options;
  options.without_bundle = true;
  TO_RETURN_IF_ERROR(registry.load_library(library_path, options));
  std::vector<PluginDeclaration> needs;
  for (const auto& registered : registry.plugins()) {
    // A plugin without bundle kernels has nothing to check against a bundle.
    if (registered->creator.bundle.kernels.empty()) continue;
    PluginDeclaration declaration;
    declaration.identity = registered->creator.identity;
    declaration.bundle = registered->creator.bundle;
    needs.push_back(std::move(declaration));
  }
  return needs;
}

}  // namespace tensoracle
