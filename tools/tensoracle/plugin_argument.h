// The value of --plugin: `LIB`, or `LIB:BUNDLE_DIR` naming the library's cubin bundle.
#pragma once

#include <string>

#include "tensoracle/plugin_registry.h"

namespace tensoracle::cli {

struct PluginArgument {
  std::string library;
  PluginLibraryOptions options;  // bundle_dir set by the LIB:BUNDLE_DIR form
};

// A value that names an existing file is a library path (whatever ':' it holds); otherwise it
// splits at its first ':' into LIB and BUNDLE_DIR.
PluginArgument parse_plugin_argument(const std::string& value);

}  // namespace tensoracle::cli
