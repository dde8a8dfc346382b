// The cubin bundle of a plugin library being loaded (PluginRegistry::load_library): where it is,
// and whether it holds what the library's creators declare.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensoracle/plugin_registry.h"

namespace tensoracle::plugin {

// <dir>/<NAME>_bundle for <dir>/lib<NAME>.so; an error when the file is not named so.
Result<std::string> default_bundle_dir(const std::string& library_path);

// The bundle `creators` (what `library_path` registered) are loaded with: null when
// options.without_bundle, or when no creator declares kernels and no bundle_dir is named.
// Otherwise the bundle is read and checked: its manifest (strict schema, safe cubin paths), every
// cubin against the size and SHA-256 it records, and each creator's kernels on each declared
// architecture. Errors name the library and the bundle directory.
Result<std::shared_ptr<const PluginBundle>> load_library_bundle(const std::string& library_path,
                                                                const PluginLibraryOptions& options,
                                                                const std::vector<PluginCreator>& creators);

}  // namespace tensoracle::plugin
